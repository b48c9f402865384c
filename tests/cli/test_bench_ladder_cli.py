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
