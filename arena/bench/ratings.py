"""`arena bench ratings`, the parts beyond the 200-bot fit against MM (`ladder.run_ratings`):

- the 2,000-bot, 1,000,000-game fit (target < 2 s), alone and with new unrated entries, with its
  Newton iterations, median of 3 runs each; the baseline in the same run is the old covariance step
  alone (a pseudo-inverse of the same information matrix, numpy's default threads);
- steadiness: the 200-bot fit repeated, min / median / max (OpenBLAS's default threads made it
  bimodal: 6–19 ms, or 0.9 s);
- live Elo under matchmaking: the live spread against the true spread after 4,000 games per bot,
  paired on the season fit (as the ladder does) against paired on live Elo (the old way).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np

from arena.bench.ladder import RATINGS_TARGET_S, synthetic_season


def run_large(bots: int = 2000, matches: int = 1_000_000, unrated: int = 20, repeats: int = 3) -> dict:
    """The large fit `repeats` times alone and with `unrated` new entries, alternately (the same
    load for both), medians reported; then the baseline once."""
    from arena.ladder.fit import ELO_PER_UNIT, fit_ratings

    true, a, b, score = synthetic_season(bots, matches)
    plain_s, unrated_s = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        fit = fit_ratings(bots, a, b, score)
        plain_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        with_new = fit_ratings(bots + unrated, a, b, score)  # the last `unrated` entries have no games
        unrated_s.append(time.perf_counter() - start)
    # baseline: the old covariance step alone, on the same information matrix
    theta = (fit.ratings - fit.ratings.mean()) / ELO_PER_UNIT
    games = np.bincount(a * bots + b, minlength=bots * bots).reshape(bots, bots).astype(float)
    games += games.T
    p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    w = games * p * (1.0 - p)
    info = np.diag(w.sum(axis=1)) - w
    start = time.perf_counter()
    np.linalg.pinv(info, hermitian=True)
    pinv_s = time.perf_counter() - start
    same = bool(np.allclose(with_new.ratings[:bots], fit.ratings) and np.isnan(with_new.ratings[bots:]).all())
    plain, new = statistics.median(plain_s), statistics.median(unrated_s)
    return {
        "bots": bots,
        "matches": matches,
        "runs": repeats,
        "fit_s": round(plain, 3),
        "fit_min_max_s": [round(min(plain_s), 3), round(max(plain_s), 3)],
        "iterations": fit.iterations,
        "unrated": unrated,
        "fit_with_unrated_s": round(new, 3),
        "fit_with_unrated_min_max_s": [round(min(unrated_s), 3), round(max(unrated_s), 3)],
        "iterations_with_unrated": with_new.iterations,
        "unrated_change_nothing": same,
        "baseline_pinv_s": round(pinv_s, 3),
        "mean_ci95_elo": round(float(np.nanmean(fit.ci95)), 1),
        "target_s": RATINGS_TARGET_S,
        "target_met": max(plain, new) < RATINGS_TARGET_S,
    }


def run_steadiness(bots: int = 200, matches: int = 100_000, repeats: int = 8) -> dict:
    from arena.ladder.fit import fit_ratings

    _, a, b, score = synthetic_season(bots, matches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit_ratings(bots, a, b, score)
        times.append(time.perf_counter() - start)
    return {
        "runs": repeats,
        "min_s": round(min(times), 4),
        "median_s": round(statistics.median(times), 4),
        "max_s": round(max(times), 4),
    }


def run_spread(bots: int = 12, games_per_bot: int = 4000, seed: int = 2) -> dict:
    from arena.ladder.simulate import live_spread

    fit = live_spread(bots, games_per_bot, pair_on="fit", seed=seed)
    live = live_spread(bots, games_per_bot, pair_on="live", seed=seed)
    return {
        "bots": bots,
        "games_per_bot": games_per_bot,
        "true_sd": round(fit["true_sd"], 1),
        "spread_ratio_fit_paired": round(fit["spread_ratio"], 3),
        "spread_ratio_live_paired": round(live["spread_ratio"], 3),
        "target": "within 10% (0.9-1.1)",
        "target_met": abs(fit["spread_ratio"] - 1.0) <= 0.10,
    }


def run_all(
    progress: Callable[[float], None], large: bool, spread: bool, bots: int = 200, matches: int = 100_000
) -> dict:
    out: dict = {"steadiness": run_steadiness(bots, matches)}
    progress(0.2)
    if large:
        out["large"] = run_large()
    progress(0.6)
    if spread:
        out["spread"] = run_spread()
    progress(1.0)
    return out
