"""`arena bench matchmaking`: the ladder's matchmaking rule against the rule before it, on simulated
seasons with known true ratings (`arena.ladder.simulate_pairing`): each seed's field played once
under each rule, so the two meet the same bots. Figures per rule: the Spearman rank correlation of
the fit with the true order (mean, sd, and the paired difference), the 95% intervals' coverage
overall and at the extremes (top and bottom tenth), the share of bots whose rank by win rate is off
their rank in the table by more than a tenth of the field, and the distinct opponents a bot met.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable

from arena.ladder.simulate_pairing import Measure, Rule, measure, play

#: (bots, games per bot) the bench plays by default
SIZES = ((30, 60), (200, 100))


def _summary(ms: list[Measure]) -> dict:
    rho = [m.spearman for m in ms]
    return {
        "spearman_mean": round(statistics.fmean(rho), 4),
        "spearman_sd": round(statistics.stdev(rho), 4) if len(rho) > 1 else 0.0,
        "coverage": round(sum(m.inside for m in ms) / max(1, sum(m.cases for m in ms)), 4),
        "coverage_extremes": round(
            sum(m.inside_extremes for m in ms) / max(1, sum(m.cases_extremes for m in ms)), 4
        ),
        "cases": sum(m.cases for m in ms),
        "contradicted": round(statistics.fmean(m.contradicted for m in ms), 4),
        "opponents": round(statistics.fmean(m.opponents for m in ms), 1),
    }


def compare(bots: int, games_per_bot: int, seeds: range) -> dict:
    """Both rules on each seed's field; the new rule's Spearman minus the old one's, per seed."""
    got: dict[Rule, list[Measure]] = {rule: [] for rule in Rule}
    for seed in seeds:
        for rule in Rule:
            got[rule].append(measure(play(bots, games_per_bot, rule, seed)))
    diff = [
        new.spearman - old.spearman for new, old in zip(got[Rule.INFORMATIVE], got[Rule.NEAREST], strict=True)
    ]
    return {
        "bots": bots,
        "games_per_bot": games_per_bot,
        "seeds": [seeds.start, seeds.stop - 1],
        "rules": {rule.value: _summary(got[rule]) for rule in Rule},
        "spearman_gain_mean": round(statistics.fmean(diff), 4),
        "spearman_gain_se": round(statistics.stdev(diff) / len(diff) ** 0.5, 4) if len(diff) > 1 else 0.0,
        "seeds_better": sum(d > 0 for d in diff),
        "seeds_worse": sum(d < 0 for d in diff),
    }


def run(
    progress: Callable[[float], None],
    sizes: tuple[tuple[int, int], ...] = SIZES,
    seeds: int = 20,
    first_seed: int = 0,
) -> dict:
    out = []
    for k, (bots, games) in enumerate(sizes):
        out.append(compare(bots, games, range(first_seed, first_seed + seeds)))
        progress((k + 1) / len(sizes))
    return {"sizes": out, "new": Rule.INFORMATIVE.value, "baseline": Rule.NEAREST.value}
