"""`arena bench ladder` as a user runs it: a real season in a temporary store, figures that agree."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import cli


def test_bench_ladder_json_figures_are_consistent() -> None:
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the bots' CPU per match is read from their cgroups")
    result = CliRunner().invoke(cli, ["bench", "ladder", "--matches", "2", "--sandbox", "bwrap", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    _table_adds_up(r, r["cores"])
    assert "season parent" in result.output  # the table shows the season's own CPU


def _table_adds_up(r: dict, cores: int) -> None:
    """CPU per match = referee + bots + the season parent (the claims, pairings and records of the
    ladder runs), each the sum of its phases; the ceiling and the share of it follow from the sum."""
    cpu = r["cpu_ms_per_match"]
    assert cpu["referee"] > 0 and cpu["bots"] > 0 and cpu["season_parent"] > 0
    ceiling = 60 * cores / (sum(cpu.values()) / 1000)
    assert abs(r["cpu_ceiling_matches_per_min"] - ceiling) <= 0.2
    assert abs(r["c2_of_ceiling"] - r["ladder_c2_matches_per_min"] / r["cpu_ceiling_matches_per_min"]) <= 0.01
    phases = r["phases_cpu_ms_per_match"]
    assert all(ms >= 0 for ms in phases.values()) and phases["bots: start-up until Join"] > 0
    assert phases["season parent: claim, pair, record"] == cpu["season_parent"]
    assert abs(sum(phases.values()) - sum(cpu.values())) <= 0.5  # each figure is rounded


def test_bench_ladder_warm_measures_both_paths_in_one_run() -> None:
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the warm start is a bwrap launcher option")
    args = ["bench", "ladder", "--matches", "2", "--sandbox", "bwrap", "--warm", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    w = r["warm"]
    _table_adds_up(w, r["cores"])
    assert w["phases_cpu_ms_per_match"]["zygotes: start-up and forks"] > 0  # the zygotes really ran
    assert w["phases_cpu_ms_per_match"]["bots: start-up until Join"] > 0
    _ratios_agree(w, r, r["warm_vs_cold"])
    refused = CliRunner().invoke(cli, ["bench", "ladder", "--sandbox", "local", "--warm"])
    assert refused.exit_code == 2 and "--warm needs the bwrap sandbox" in refused.output


def test_bench_ladder_stdio_field_measures_direct_and_bridge_in_one_run() -> None:
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the bots' CPU per match is read from their cgroups")
    args = ["bench", "ladder", "--matches", "2", "--sandbox", "bwrap", "--field", "stdio", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["field"] == "stdio" and r["bots"], r  # the stdio samples whose toolchains are here
    b = r["bridge"]
    assert b["phases_cpu_ms_per_match"]["bots: start-up until Join"] > 0  # the bridge's Python start
    _ratios_agree(r, b, r["direct_vs_bridge"])
    refused = CliRunner().invoke(cli, ["bench", "ladder", "--field", "stdio", "--warm"])
    assert refused.exit_code == 2 and "--warm is the warm start of Python bots" in refused.output


def test_bench_ladder_node_field_plays_the_node_samples() -> None:
    from arena.sandbox.languages import missing_tools
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the bots' CPU per match is read from their cgroups")
    if missing_tools("node") or missing_tools("typescript"):
        pytest.skip(f"Node.js tools missing: {missing_tools('node') + missing_tools('typescript')}")
    args = ["bench", "ladder", "--matches", "2", "--sandbox", "bwrap", "--field", "node", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["field"] == "node" and r["bots"] == ["node", "typescript"], r
    _table_adds_up(r, r["cores"])


def _ratios_agree(first: dict, second: dict, ratios: dict) -> None:
    """The printed ratios of two modes of one run are first / second: matches/min at c1 and c2, CPU per match."""
    for conc in (1, 2):
        want = first[f"ladder_c{conc}_matches_per_min"] / second[f"ladder_c{conc}_matches_per_min"]
        assert abs(ratios[f"c{conc}"] - want) <= 0.01
    cpu = sum(first["cpu_ms_per_match"].values()) / sum(second["cpu_ms_per_match"].values())
    assert abs(ratios["cpu_per_match"] - cpu) <= 0.01
