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
    cpu = r["cpu_ms_per_match"]
    assert cpu["referee"] > 0 and cpu["bots"] > 0
    ceiling = 60 * r["cores"] / ((cpu["referee"] + cpu["bots"]) / 1000)
    assert abs(r["cpu_ceiling_matches_per_min"] - ceiling) <= 0.2
    assert abs(r["c2_of_ceiling"] - r["ladder_c2_matches_per_min"] / r["cpu_ceiling_matches_per_min"]) <= 0.01
    phases = r["phases_cpu_ms_per_match"]
    assert all(ms >= 0 for ms in phases.values()) and phases["bots: start-up until Join"] > 0
    assert abs(sum(phases.values()) - (cpu["referee"] + cpu["bots"])) <= 0.5  # each figure is rounded


def test_bench_ladder_warm_measures_both_paths_in_one_run() -> None:
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here: the warm start is a bwrap launcher option")
    args = ["bench", "ladder", "--matches", "2", "--sandbox", "bwrap", "--warm", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    w = r["warm"]
    assert w["phases_cpu_ms_per_match"]["zygotes: start-up and forks"] > 0  # the zygotes really ran
    assert w["phases_cpu_ms_per_match"]["bots: start-up until Join"] > 0
    for conc in (1, 2):
        want = w[f"ladder_c{conc}_matches_per_min"] / r[f"ladder_c{conc}_matches_per_min"]
        assert abs(r["warm_vs_cold"][f"c{conc}"] - want) <= 0.01
    cpu = sum(w["cpu_ms_per_match"].values()) / sum(r["cpu_ms_per_match"].values())
    assert abs(r["warm_vs_cold"]["cpu_per_match"] - cpu) <= 0.01
    refused = CliRunner().invoke(cli, ["bench", "ladder", "--sandbox", "local", "--warm"])
    assert refused.exit_code == 2 and "--warm needs the bwrap sandbox" in refused.output
