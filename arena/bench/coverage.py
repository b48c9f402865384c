"""`arena bench coverage`: how often the season fit's 95% intervals hold the true ratings, overall, at
the extremes (the strongest and weakest 10% of bots by true rating) and in the middle, over many
simulated seasons of ladders where the prior's pull matters (sparse: few games a bot; wide: a large
spread of strength) and of an ordinary one. Baseline, in the same run on the same fits: the normal
(Wald) interval without the prior-pull widening (`Fit.ci95_normal`).

Opponents are drawn from the whole field; a bot with a perfect or zero score shows a bound, not an
interval, and is left out (its bound is checked by tests/ladder/test_calibration.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

EXTREME_SHARE = 0.10  # the top and the bottom tenth by true rating


@dataclass(frozen=True)
class Ladder:
    """A kind of simulated season: `bots` with true ratings ~ N(1500, sd), `games` a bot."""

    name: str
    bots: int
    games: int
    sd: float


LADDERS = (
    Ladder("sparse", 100, 10, 200.0),
    Ladder("sparse", 200, 20, 300.0),
    Ladder("wide", 100, 100, 400.0),
    Ladder("wide", 30, 60, 400.0),
    Ladder("wide", 100, 100, 500.0),
    Ladder("ordinary", 100, 100, 200.0),
)


def season(rng: np.random.Generator, ladder: Ladder) -> tuple[np.ndarray, ...]:
    """(true ratings, a, b, A's score) of one season, opponents drawn from the whole field."""
    n, m = ladder.bots, ladder.bots * ladder.games // 2
    true = rng.normal(1500.0, ladder.sd, n)
    a = rng.integers(0, n, m)
    b = (a + rng.integers(1, n, m)) % n
    p = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
    return true, a, b, (rng.random(m) < p).astype(float)


def _share(hits: list[bool]) -> float:
    return round(float(np.mean(hits)), 4) if hits else float("nan")


def measure(ladder: Ladder, seasons: int, seed: int = 0) -> dict:
    """Coverage of `seasons` seasons of `ladder`: widened (as shown) and normal, overall, at the
    extremes and in the middle, with the share of seasons whose extremes covered 93-97%."""
    from arena.ladder.fit import fit_ratings

    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {
        f"{w}_{k}": [] for w in ("widened", "normal") for k in ("all", "ext", "mid")
    }
    per_season = []
    for _ in range(seasons):
        true, a, b, score = season(rng, ladder)
        fit = fit_ratings(ladder.bots, a, b, score)
        shown = ~fit.bound.astype(bool) & fit.rated
        err = np.abs(fit.ratings - (true - true.mean() + 1500.0))
        rank = np.argsort(np.argsort(true))
        cut = EXTREME_SHARE * ladder.bots
        ext = (rank < cut) | (rank >= ladder.bots - cut)
        for w, half in (("widened", fit.ci95), ("normal", fit.ci95_normal)):
            inside = err <= half
            hits[f"{w}_all"] += inside[shown].tolist()
            hits[f"{w}_ext"] += inside[shown & ext].tolist()
            hits[f"{w}_mid"] += inside[shown & ~ext].tolist()
        if (shown & ext).any():
            per_season.append(float((err <= fit.ci95)[shown & ext].mean()))
    out: dict = {
        "ladder": ladder.name,
        "bots": ladder.bots,
        "games_per_bot": ladder.games,
        "sd": ladder.sd,
        "seasons": seasons,
        "cases": len(hits["widened_all"]),
        "extreme_cases": len(hits["widened_ext"]),
    }
    out.update({k: _share(v) for k, v in hits.items()})
    out["extremes_per_season_sd"] = round(float(np.std(per_season)), 4) if per_season else None
    return out


def run_coverage_bench(seasons: int, progress: Callable[[float], None], seed: int = 0) -> dict:
    rows = []
    for k, ladder in enumerate(LADDERS):
        rows.append(measure(ladder, seasons, seed + 1000 * k))
        progress((k + 1) / len(LADDERS))
    return {"seasons": seasons, "ladders": rows, "target": "0.93-0.97 at the extremes"}
