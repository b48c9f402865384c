"""`arena bench strength` and its oracle: real figures from real deals, and an oracle that only a
benchmark can reach (no bundle, nothing of arena/bench inside the bot sandbox)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bench import oracle
from arena.cli import cli
from arena.sandbox.bundle import load_bundle
from arena.sandbox.runtime import bot_runtime

REPO = Path(__file__).resolve().parents[2]


def test_the_oracle_is_for_benchmarks_only() -> None:
    bench = Path(oracle.__file__).resolve().parent
    for bound in bot_runtime().ro_binds:
        assert bench != bound and bench not in Path(bound).parents and Path(bound) not in bench.parents
    names = {tomllib.loads(p.read_text())["name"] for p in (REPO / "sample_bots").rglob("bot.toml")}
    assert "oracle" not in names
    with pytest.raises(Exception, match="bot.toml"):
        load_bundle(bench)


def test_bench_strength_measures_a_bot_against_the_oracle() -> None:
    result = CliRunner().invoke(cli, ["bench", "strength", "--deals", "1", "--bots", "greedy", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    row = figures["bots"]["greedy"]
    assert figures["deals"] == 1 and figures["baseline"] == "tactician"
    assert row["margin"] < 0, "the oracle sees every card: greedy cannot outscore it on this deal"
    assert row["closed"] is None  # tactician, the baseline, was not measured in this run
    assert row["ci95"] is None  # one duplicate pair has no spread


def test_bench_strength_runs_the_search_bots() -> None:
    """pimc and ismcts draw from `self.rng`, which the SDK sets on Welcome: the bench sets it too."""
    result = CliRunner().invoke(cli, ["bench", "strength", "--deals", "1", "--bots", "pimc,ismcts", "--json"])
    assert result.exit_code == 0, result.output
    bots = json.loads(result.output)["bots"]
    assert set(bots) == {"pimc", "ismcts"} and all(isinstance(r["margin"], float) for r in bots.values())


def test_bench_strength_names_a_missing_bot() -> None:
    result = CliRunner().invoke(cli, ["bench", "strength", "--bots", "nosuchbot"])
    assert result.exit_code == 2 and "no Python sample bot 'nosuchbot'" in result.output
