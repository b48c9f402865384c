"""`arena bench strength` and its oracle: real figures from real deals, and an oracle that only a
benchmark can reach (no bundle, nothing of arena/bench inside the bot sandbox)."""

from __future__ import annotations

import json
import math
import random
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.bench import oracle, strength
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


def _residual_z(bot: list[float], base: list[float], r: float) -> float:
    """How many standard errors the per-deal residuals bot_i - r * base_i have their mean away from 0."""
    res = [b - r * t for b, t in zip(bot, base, strict=True)]
    n = len(res)
    mean = sum(res) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in res) / (n - 1))
    return abs(mean) / (sd / math.sqrt(n))


def test_paired_interval_is_fiellers_set_of_ratios() -> None:
    """The interval of the share closed holds exactly the ratios whose residuals are within 1.96 standard
    errors of 0: just inside its ends they are, just outside they are not."""
    rng = random.Random(3)
    base = [rng.gauss(-5, 3) for _ in range(200)]
    bot = [0.6 * t + rng.gauss(0, 2) for t in base]  # closes about 40%, with noise of its own
    p = strength.paired(bot, base)
    lo, hi = p["closed_ci95"]
    assert lo < 1 - (sum(bot) / sum(base)) < hi and hi - lo < 0.25
    for closed in (lo, hi):
        inside = 1 - closed + (0.001 if closed == hi else -0.001)  # ratio = 1 - closed
        outside = 1 - closed + (-0.003 if closed == hi else 0.003)
        assert _residual_z(bot, base, inside) <= 1.96 < _residual_z(bot, base, outside)
    diffs = [b - t for b, t in zip(bot, base, strict=True)]
    assert p["vs_baseline"] == round(sum(diffs) / len(diffs), 2)
    assert p["vs_baseline_ci95"] == round(strength.interval(diffs), 2)


def test_paired_interval_is_narrow_when_the_bots_share_the_luck() -> None:
    """Deals whose luck hits both bots alike leave the paired difference's interval narrow though each
    bot's own interval is wide; with no clear baseline gap the ratio's interval is unbounded (None)."""
    rng = random.Random(4)
    luck = [rng.gauss(0, 6) for _ in range(100)]
    base = [-4 + x for x in luck]
    bot = [-2 + x + rng.gauss(0, 0.5) for x in luck]
    p = strength.paired(bot, base)
    assert strength.interval(bot) > 1.0 and p["vs_baseline_ci95"] < 0.2
    lo, hi = p["closed_ci95"]
    assert 0.3 < lo < 1 - sum(bot) / sum(base) < hi < 0.8  # the baseline's own mean is still uncertain
    unclear = [rng.gauss(-0.3, 6) for _ in range(100)]  # a baseline gap not clearly below 0
    assert strength.paired(bot, unclear)["closed_ci95"] is None


def test_bench_strength_pairs_each_bot_with_the_baseline() -> None:
    result = CliRunner().invoke(
        cli, ["bench", "strength", "--deals", "2", "--bots", "tactician,greedy", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["bots"]
    assert rows["tactician"]["closed"] == 0 and "vs_baseline" not in rows["tactician"]
    greedy = rows["greedy"]
    assert greedy["vs_baseline"] == round(greedy["margin"] - rows["tactician"]["margin"], 2)
    assert greedy["vs_baseline_ci95"] is not None and greedy["cpu_s_per_deal"] > 0
    text = CliRunner().invoke(cli, ["bench", "strength", "--deals", "2", "--bots", "tactician,greedy"])
    assert text.exit_code == 0 and "per deal vs it" in text.output and "Fieller" in text.output


def test_the_oracles_playouts_are_an_option_named_in_the_figures() -> None:
    """The yardstick is part of the result: a stronger oracle (more playouts a line) plays other cards,
    and the figures say which oracle they were measured against."""
    from arena.engine import Match, Rules
    from arena.engine.rng import deal_deck

    differs = 0
    for i in range(4):  # the oracle's own deals at the default count; the cards 1 playout a line picks
        match = Match(Rules(), 0)
        deal = match.start_deal(deck=deal_deck(3, i), dealer=i % 2)
        while deal.stock_count:
            card = oracle.oracle_card(deal)
            differs += oracle.oracle_card(deal, 1) != card
            match.play(card)
    assert differs > 0, "one playout a line should choose otherwise than sixteen somewhere"
    runner = CliRunner()
    default = json.loads(
        runner.invoke(cli, ["bench", "strength", "--deals", "1", "--bots", "greedy", "--json"]).output
    )
    assert default["oracle_playouts"] == oracle.PLAYOUTS == 16  # the CLI's default is the oracle's own
    two = runner.invoke(
        cli, ["bench", "strength", "--deals", "1", "--bots", "greedy", "--oracle-playouts", "2"]
    )
    assert two.exit_code == 0 and "oracle 2 playouts a line" in two.output
    bad = runner.invoke(cli, ["bench", "strength", "--oracle-playouts", "0"])
    assert bad.exit_code == 2 and "--oracle-playouts" in bad.output
