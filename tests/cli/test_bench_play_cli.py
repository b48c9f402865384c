"""`arena bench play` as a user runs it: real `arena play` processes, the exit with the collector
frozen against not, alternated, figures that agree."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_bench_play_measures_both_exits_of_real_arena_play_processes() -> None:
    result = CliRunner().invoke(cli, ["bench", "play", "--rounds", "1", "--sandbox", "local", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    now, before = r["medians"]["frozen"], r["medians"]["unfrozen"]
    for figures in (now, before):
        assert figures["process_ms"] > 0 and figures["exit_cpu_ms"] >= 0 and figures["exit_wall_ms"] > 0
    assert abs(r["exit_ratio"] - now["exit_cpu_ms"] / before["exit_cpu_ms"]) < 0.01
    table = CliRunner().invoke(cli, ["bench", "play", "--rounds", "1", "--sandbox", "local"])
    for text in ("exit, collector frozen (now)", "exit, not frozen (before, baseline)"):
        assert text in table.output
