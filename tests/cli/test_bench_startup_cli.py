"""`arena bench startup` as a user runs it: real bwrap matches under both runtimes, figures that agree."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import cli


def test_bench_startup_json_figures_are_consistent() -> None:
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the start-up bench plays bwrap matches")
    result = CliRunner().invoke(cli, ["bench", "startup", "--rounds", "1", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    lean, before = r["variants"]["lean prefix"], r["variants"]["whole venv (before)"]
    for v in (lean, before):
        assert 0 < v["join_cpu_ms"] <= v["bot_cpu_ms"] and v["join_wall_ms"] > 0
    assert abs(r["join_cpu_ratio"] - lean["join_cpu_ms"] / before["join_cpu_ms"]) < 0.01
    assert abs(r["join_cpu_saved_ms"] - (before["join_cpu_ms"] - lean["join_cpu_ms"])) <= 0.11
