"""`arena bench solver` as a user runs it: figures for the solver and its same-run minimax baseline."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_bench_solver_json_figures() -> None:
    result = CliRunner().invoke(cli, ["bench", "solver", "--positions", "16", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["compiled_core"] is True and r["disagreements"] == 0
    assert set(r["variants"]) == {"solver_c", "minimax_c", "solver_python", "minimax_python"}
    assert r["variants"]["solver_c"]["positions"] == 16 and r["variants"]["minimax_python"]["positions"] == 2
    assert r["solver_vs_minimax_c"] > 1 and r["solver_vs_minimax_python"] > 1  # pruning prunes
    assert r["median_ms"] == r["variants"]["solver_c"]["median_ms"]


def test_bench_solver_text_and_bad_input() -> None:
    result = CliRunner().invoke(cli, ["bench", "solver", "--positions", "10"])
    assert result.exit_code == 0, result.output
    assert (
        "positions/s" in result.output and "its minimax" in result.output and "target median" in result.output
    )
    bad = CliRunner().invoke(cli, ["bench", "solver", "--positions", "3"])
    assert bad.exit_code == 2 and "--positions" in bad.output
