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


def test_bench_startup_per_language_reports_join_baseline_and_build() -> None:
    """`--languages` for a compiled stdio sample (C) and an interpreted one (shell): each is built
    where it has a build, plays its mirror matches, and has its bare hello-world; its seat joins as it
    is launched (the referee speaks its lines), and the same bundle behind the Python bridge, in the
    same rounds, is its baseline."""
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the start-up bench plays bwrap matches")
    argv = ["bench", "startup", "--language", "c", "--language", "shell", "--rounds", "1", "--json"]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["skipped"] == {} and list(r["languages"]) == ["c", "shell"]
    c, shell = r["languages"]["c"], r["languages"]["shell"]
    assert c["build_s"] > 0 and shell["build_s"] is None  # gcc ran; the shell bot has no build
    for v in (c, shell):
        assert v["hello_bare_ms"] > 0 and v["join_wall_ms"] > 0 and v["bot_cpu_ms"] > 0
        assert v["referee_cpu_ms"] > 0 and v["join_cpu_ms"] <= v["bot_cpu_ms"]
        bridged = v["bridged"]  # the bridge's Python start is paid before its Join
        assert bridged["join_cpu_ms"] > 0 and bridged["join_cpu_ms"] <= bridged["bot_cpu_ms"]


def test_bench_startup_names_an_unknown_language() -> None:
    result = CliRunner().invoke(cli, ["bench", "startup", "--language", "cobol"])
    assert result.exit_code == 2 and "no sample for cobol" in result.output
    assert "python node typescript" in result.output


def test_bench_startup_sandbox_goes_with_languages() -> None:
    result = CliRunner().invoke(cli, ["bench", "startup", "--sandbox", "docker"])
    assert result.exit_code == 2 and "--sandbox goes with --languages" in result.output
