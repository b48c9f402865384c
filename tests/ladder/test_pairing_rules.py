"""The ladder's matchmaking rule against the rule before it, on simulated seasons (`arena bench
matchmaking` at a small scale, arena/bench/matchmaking.py): the same 24 fields of 30 bots, 60 games
each, played under both. The new rule spreads a bot's opponents, so a bot's win rate no longer
contradicts its rank through who it was fed, and its intervals cover the truth closer to the nominal
95%, without ranking the field worse. Figures: docs/ladder.md, Matchmaking. The command's own
output is tested in tests/cli/test_bench_matchmaking_cli.py.
"""

from __future__ import annotations

import pytest

from arena.bench.matchmaking import compare

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
