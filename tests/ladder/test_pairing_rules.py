"""The ladder's matchmaking rule against the rule before it, on simulated seasons (`arena bench
matchmaking` at a small scale, arena/bench/matchmaking.py): the same 24 fields of 30 bots, 60 games
each, played under both. The new rule spreads a bot's opponents, so a bot's win rate no longer
contradicts its rank through who it was fed, and its intervals cover the truth closer to the nominal
95% (at the extremes too), without ranking the field worse. Figures: docs/ladder.md, Matchmaking.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from arena.bench.matchmaking import compare
from arena.cli.bench_matchmaking import matchmaking

SEEDS = range(24)


@pytest.mark.slow
def test_the_new_rule_is_better_on_its_seeds() -> None:
    r = compare(30, 60, SEEDS)
    new, old = r["rules"]["informative"], r["rules"]["nearest"]
    # a bot meets more of the field, and its win rate tells its rank (measured: 0.04 against 0.38)
    assert new["opponents"] > old["opponents"] + 3, r
    assert new["contradicted"] < old["contradicted"] / 3, r
    # coverage nearer 95% (720 cases a rule; measured: 0.935 against 0.882)
    assert abs(new["coverage"] - 0.95) < abs(old["coverage"] - 0.95), r
    assert new["coverage"] >= 0.92, r
    # the order is as good: the paired Spearman difference within 3 standard errors of zero or above
    assert r["spearman_gain_mean"] > -3 * r["spearman_gain_se"] - 1e-9, r


def test_the_bench_prints_both_rules_side_by_side() -> None:
    out = CliRunner().invoke(matchmaking, ["--size", "8x10", "--seeds", "2"])
    assert out.exit_code == 0, out.output
    assert "8 bots x 10 games, nearest" in out.output and "8 bots x 10 games, informative" in out.output
    assert "informative - nearest" in out.output and "coverage target 0.93-0.97" in out.output


def test_the_bench_refuses_a_bad_size_by_name() -> None:
    out = CliRunner().invoke(matchmaking, ["--size", "thirty"])
    assert out.exit_code == 2
    assert "'thirty': write BOTSxGAMES" in out.output and "Traceback" not in out.output
