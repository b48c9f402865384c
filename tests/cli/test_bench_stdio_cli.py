"""`arena bench stdio` as a user runs it: both designs of a stdio bot's seat measured in one run."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_bench_stdio_measures_both_seats_and_the_translation_in_one_run() -> None:
    result = CliRunner().invoke(cli, ["bench", "stdio", "--turns", "100", "--rounds", "2", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.stdout)
    assert len(r["in_process_runs_us"]) == len(r["socket_runs_us"]) == 2
    assert r["translation_us"] > 0 and r["in_process_us"] > 0 and r["socket_us"] > 0
    assert abs(r["socket_vs_in_process"] - r["socket_us"] / r["in_process_us"]) <= 0.01
