"""`arena bench referee` as a user runs it: real matches and a real echo server, figures that agree."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import cli


def test_bench_referee_json_figures_are_consistent() -> None:
    result = CliRunner().invoke(cli, ["bench", "referee", "--rounds", "2", "--deals", "1", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["moves_per_round"] == 32 and len(r["rounds"]) == 2
    assert r["baseline_ms_per_round_trip"] > 0 and r["referee_ms_per_move"] > 0
    assert abs(r["ratio"] - r["referee_ms_per_move"] / r["baseline_ms_per_round_trip"]) < 0.01
    assert r["target_ratio"] == 1.25 and r["met"] == (r["ratio"] <= 1.25)
    low, high = r["paired_ratio_quartiles"]
    assert low <= r["median_paired_ratio"] <= high
    extra = r["referee_cpu_us_per_move"] - r["baseline_cpu_us_per_round_trip"]
    assert abs(r["referee_extra_cpu_us_per_move"] - extra) <= 1  # each figure is rounded on its own


@pytest.mark.callgrind
@pytest.mark.timeout(900)  # four programs under valgrind: 30 s on an idle host, 220 s seen on a loaded one
def test_bench_referee_counts_instructions_of_one_more_move_on_each_side() -> None:
    """--instructions: four real runs under callgrind; one more move is the long run less the short
    over the moves between them, on each side, and their ratio is what is printed."""
    result = CliRunner().invoke(cli, ["bench", "referee", "--instructions", "--deals", "2", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    c = r["counts"]
    assert r["deals"] == [1, 2] and r["moves"] == 32
    for side, per in (("referee", r["referee_per_move"]), ("echo", r["echo_per_round_trip"])):
        assert c[f"{side} long"] > c[f"{side} short"] > 0
        assert abs(per - (c[f"{side} long"] - c[f"{side} short"]) / 32) <= 1
    assert abs(r["ratio"] - r["referee_per_move"] / r["echo_per_round_trip"]) < 0.001
    table = CliRunner().invoke(cli, ["bench", "referee", "--instructions", "--deals", "1"])
    assert table.exit_code == 2 and "--deals 2 or more" in table.output
