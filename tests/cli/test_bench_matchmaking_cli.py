"""`arena bench matchmaking` as a user runs it: both rules side by side, JSON, and a bad size refused
by name."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_the_bench_prints_both_rules_side_by_side() -> None:
    out = CliRunner().invoke(cli, ["bench", "matchmaking", "--size", "8x10", "--seeds", "2"])
    assert out.exit_code == 0, out.output
    assert "8 bots x 10 games, nearest" in out.output and "8 bots x 10 games, informative" in out.output
    assert "informative - nearest" in out.output and "coverage target 0.93-0.97" in out.output


def test_the_bench_json_holds_both_rules() -> None:
    out = CliRunner().invoke(cli, ["bench", "matchmaking", "--size", "8x10", "--seeds", "2", "--json"])
    assert out.exit_code == 0, out.output
    (size,) = json.loads(out.output)["sizes"]
    assert set(size["rules"]) == {"informative", "nearest"} and size["seeds"] == [0, 1]
    assert all(0.0 <= r["coverage"] <= 1.0 and r["cases"] > 0 for r in size["rules"].values())


def test_the_bench_refuses_a_bad_size_by_name() -> None:
    out = CliRunner().invoke(cli, ["bench", "matchmaking", "--size", "thirty"])
    assert out.exit_code == 2
    assert "'thirty': write BOTSxGAMES" in out.output and "Traceback" not in out.output
    out = CliRunner().invoke(cli, ["bench", "matchmaking", "--size", "3x10"])
    assert out.exit_code == 2 and "bots must be 4-2000" in out.output
