"""`arena bench ratings`, the parts beyond the 200-bot fit against MM (`ladder.run_ratings`):

- the sparse fit against the dense reference at 200, 2,000 and 10,000 bots (100 games each), in the
  same run: cold, a warm full refit after 1,000 more results, the incremental refit of the same
  (`arena.ladder.refit`, with its distance from the full one), and the dense fit where it fits in
  memory (targets: cold ≤ 2 s at 10,000 bots, a refit ≤ 100 ms per 1,000 results); the cold fit and
  the refit timed in turn with their baselines (the compiled passes on int64 pairs on one thread;
  the cold fit also pair by pair), wall and CPU time;
- with --coverage, the 95% intervals' coverage of the true ratings at 200 and 2,000 bots, opponents
  from the whole field, from a narrow band of ranks, and paired by the ladder's matchmaking;
- steadiness: the 200-bot fit repeated, min / median / max (OpenBLAS's default threads made it
  bimodal: 6–19 ms, or 0.9 s);
- live Elo under matchmaking: the live spread against the true spread after 4,000 games per bot,
  paired on the season fit (as the ladder does) against paired on live Elo (the old way), over ten
  seeds: mean, sd, range and the share of seasons within ±10%.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import TypeVar

import numpy as np

from arena.bench.ladder import synthetic_season

T = TypeVar("T")


def _median_time(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out  # repeats ≥ 1


def run_large(
    sizes: tuple[tuple[int, int], ...] = ((200, 100_000), (2000, 1_000_000), (10_000, 10_000_000)),
    repeats: int = 3,
    dense_max: int = 2000,
    new_results: int = 1000,
) -> dict:
    """The sparse fit against the dense reference (`arena.bench.dense_fit`) at each size, in the same
    run: the sparse fit cold (median of `repeats`), a warm refit after `new_results` more results (its
    start the cold fit's ratings: what the standings do after new results), the incremental refit of
    them, and the dense fit where it fits in memory (`dense_max` bots: at 10,000 its n×n tables take
    ~6 GB), with the largest difference of their ratings and intervals.

    The cold fit and the incremental refit are timed alternately with their baselines (the compiled
    passes on int64 u and v on the caller's thread alone: ARENA_FIT_KERNEL=runs, ARENA_FIT_THREADS=1;
    the cold fit also pair by pair, ARENA_FIT_KERNEL=pairs), wall and CPU seconds (the process's, all
    its threads): on a loaded machine the wall time is mostly waiting for a core, the CPU time not."""
    from arena.bench.dense_fit import dense_fit
    from arena.ladder.fit import Pairs, fit_pairs
    from arena.ladder.refit import refit

    out = []
    for bots, matches in sizes:
        _, a, b, score = synthetic_season(bots, matches + new_results)
        a0, b0, s0 = a[:matches], b[:matches], score[:matches]
        aggregate_s, pairs = _median_time(partial(Pairs.from_matches, bots, a0, b0, s0), 1)
        more = Pairs.from_matches(bots, a, b, score)
        new = Pairs.from_matches(bots, a[matches:], b[matches:], score[matches:])
        fit = fit_pairs(pairs)
        cold = _alternate(partial(fit_pairs, pairs), repeats, before=BEFORE, pair_by_pair=PAIR_BY_PAIR)
        step_run = partial(refit, fit, more, new)
        step = _alternate(step_run, max(repeats, 5), before=BEFORE)
        warm_s, warm = _median_time(partial(fit_pairs, more, warm=fit.ratings), repeats)
        refitted = step_run()
        cold_s, step_s = cold["now"][0], step["now"][0]
        row: dict = {
            "bots": bots,
            "matches": matches,
            "pairs": len(pairs.u),
            "aggregate_s": round(aggregate_s, 3),
            "sparse_fit_s": round(cold_s, 3),
            "sparse_fit_cpu_s": round(cold["now"][1], 3),
            "sparse_fit_before_s": round(cold["before"][0], 3),  # int64 passes, one thread: the baseline
            "sparse_fit_before_cpu_s": round(cold["before"][1], 3),
            "sparse_fit_pair_by_pair_s": round(cold["pair_by_pair"][0], 3),  # the passes before the runs
            "iterations": fit.iterations,
            f"warm_refit_after_{new_results}_s": round(warm_s, 3),
            "warm_iterations": warm.iterations,
            f"incremental_refit_after_{new_results}_s": round(step_s, 4),
            f"incremental_refit_after_{new_results}_cpu_s": round(step["now"][1], 4),
            f"incremental_refit_after_{new_results}_before_s": round(step["before"][0], 4),
            f"incremental_refit_after_{new_results}_before_cpu_s": round(step["before"][1], 4),
            "incremental": refitted.iterations == 0,  # False: refit made the full fit (a small ladder)
            "incremental_max_diff_elo": float(f"{np.abs(refitted.ratings - warm.ratings).max():.2g}"),
            "mean_ci95_elo": round(float(np.nanmean(fit.ci95)), 1),
        }
        if bots <= dense_max:
            dense_s, (ratings, var, its) = _median_time(partial(dense_fit, bots, a0, b0, s0), 1)
            row.update(
                dense_fit_s=round(dense_s, 3),
                dense_iterations=its,
                max_rating_diff_elo=float(f"{np.abs(fit.ratings - ratings).max():.2g}"),
                ci95_ratio_min_max=[
                    round(float(np.sqrt(fit.var / var).min()), 4),
                    round(float(np.sqrt(fit.var / var).max()), 4),
                ],
            )
        else:
            row["dense_fit_s"] = (
                f"not run: {bots:,} bots' n×n tables take ~{6 * bots * bots * 8 / 1e9:.0f} GB"
            )
        out.append(row)
    return {
        "sizes": out,
        "runs": repeats,
        "target_cold_s": 2.0,
        "target_warm_s_per_1000": 0.1,
        "load_before": _load(),
        "threads": _threads(),
    }


BEFORE = {"ARENA_FIT_KERNEL": "runs", "ARENA_FIT_THREADS": "1"}  # int64 u and v, one thread
PAIR_BY_PAIR = {"ARENA_FIT_KERNEL": "pairs", "ARENA_FIT_THREADS": "1"}  # an exp and a scatter a pair


def _alternate(fn: Callable[[], object], repeats: int, **baselines: dict[str, str]) -> dict:
    """{name: (median wall s, median CPU s)} of `fn` under the kernel as configured ("now") and
    under each baseline's environment, run in turn `repeats` times (so that a change of the
    machine's load falls on all of them alike)."""
    import os

    configs = [{}, *baselines.values()]
    walls: list[list[float]] = [[] for _ in configs]
    cpus: list[list[float]] = [[] for _ in configs]
    for _ in range(repeats):
        for k, env in enumerate(configs):
            before = {name: os.environ.get(name) for name in env}
            os.environ.update(env)
            try:
                start, cpu = time.perf_counter(), time.process_time()
                fn()
                walls[k].append(time.perf_counter() - start)
                cpus[k].append(time.process_time() - cpu)
            finally:
                for name, value in before.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
    names = ["now", *baselines]
    return {
        name: (statistics.median(w), statistics.median(c))
        for name, w, c in zip(names, walls, cpus, strict=True)
    }


def _load() -> float | None:
    import os

    try:
        return round(os.getloadavg()[0], 1)
    except OSError:
        return None


def _threads() -> int:
    from arena.ladder import kernel

    return kernel.threads()


def matchmaking_season(
    bots: int, games_per_bot: int, seed: int, *, capped: bool = True
) -> tuple[np.ndarray, ...]:
    """(true ratings, a, b, score) of a season paired as the ladder pairs (`pick_pairing` on the fit,
    refitted after every `bots * 10` games, that is every 20 games per bot, live Elo while provisional);
    `capped=False`: by the rule before (nearest rating plus offset, no repeat cap: neighbours meet
    again and again). The season is `arena.ladder.simulate_pairing.play`'s."""
    from arena.ladder.simulate_pairing import Rule, play

    season = play(bots, games_per_bot, Rule.INFORMATIVE if capped else Rule.NEAREST, seed, refit_games=20)
    return season.true, season.a, season.b, season.score


def run_coverage(
    bots: int, ladders: int, games_per_bot: int, band: int = 0, seed: int = 7, matchmaking: bool = False
) -> dict:
    """How often the 95% intervals hold the true ratings (centred as the fit is: mean 1500), over
    `ladders` simulated seasons of `bots`. `band` 0: opponents drawn from the whole field (as
    `synthetic_season`); else each bot meets only the `band` bots ranked nearest it on either side
    (a matchmaking that never looks far: where the diagonal intervals are too narrow)."""
    from arena.ladder.fit import fit_ratings

    rng = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {"all": [], "ext": [], "normal": [], "normal_ext": []}
    matches = bots * games_per_bot // 2
    for ladder in range(ladders):
        if matchmaking:
            true, a, b, score = matchmaking_season(bots, games_per_bot, seed + ladder)
        else:
            true = np.sort(rng.normal(1500.0, 200.0, bots))
            a = rng.integers(0, bots, matches)
            offset = (
                rng.integers(1, band + 1, matches) * rng.choice([-1, 1], matches)
                if band
                else rng.integers(1, bots, matches)
            )
            b = np.clip(a + offset, 0, bots - 1) if band else (a + offset) % bots
            keep = a != b
            a, b = a[keep], b[keep]
            p = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
            score = (rng.random(len(a)) < p).astype(float)
        fit = fit_ratings(bots, a, b, score)
        ok = ~fit.bound.astype(bool) & fit.rated
        err = np.abs(fit.ratings - (true - true.mean() + 1500.0))
        rank = np.argsort(np.argsort(true))
        ext = (rank < bots // 10) | (rank >= bots - bots // 10)  # the top and bottom 10% by truth
        for key, half in (("", fit.ci95), ("normal", fit.ci95_normal)):
            inside = err <= half
            hits[key or "all"] += inside[ok].tolist()
            hits[f"{key}_ext" if key else "ext"] += inside[ok & ext].tolist()
    total = len(hits["all"])
    return {
        "bots": bots,
        "ladders": ladders,
        "games_per_bot": games_per_bot,
        "opponents": "the ladder's matchmaking"
        if matchmaking
        else f"the {band} ranked nearest on either side"
        if band
        else "the whole field",
        "cases": total,
        "coverage": round(float(np.mean(hits["all"])), 4) if total else float("nan"),
        "coverage_extremes": round(float(np.mean(hits["ext"])), 4) if hits["ext"] else float("nan"),
        # the same fits' normal intervals, before the widening by the prior's pull: the baseline
        "coverage_normal": round(float(np.mean(hits["normal"])), 4) if total else float("nan"),
        "coverage_normal_extremes": round(float(np.mean(hits["normal_ext"])), 4)
        if hits["ext"]
        else float("nan"),
        "target": "0.93-0.97",
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


def _spread_figures(ratios: list[float]) -> dict:
    r = np.array(ratios)
    return {
        "mean": round(float(r.mean()), 3),
        "sd": round(float(r.std(ddof=1)), 3) if len(r) > 1 else 0.0,
        "min": round(float(r.min()), 3),
        "max": round(float(r.max()), 3),
        "within_10pct": round(float((np.abs(r - 1.0) <= 0.10).mean()), 3),
    }


def run_spread(bots: int = 12, games_per_bot: int = 4000, seeds: int = 10) -> dict:
    """The live spread over the true one after `games_per_bot` games, on `seeds` simulated seasons
    paired on the season fit and the same seeds paired on live Elo: mean, sd, range and the share of
    seasons within ±10% of the truth (one season's figure says little: its sd is about 0.1)."""
    from arena.ladder.simulate import live_spread

    fit = [live_spread(bots, games_per_bot, pair_on="fit", seed=s)["spread_ratio"] for s in range(seeds)]
    live = [live_spread(bots, games_per_bot, pair_on="live", seed=s)["spread_ratio"] for s in range(seeds)]
    on_fit, on_live = _spread_figures(fit), _spread_figures(live)
    return {
        "bots": bots,
        "games_per_bot": games_per_bot,
        "seeds": seeds,
        "spread_ratio_fit_paired": on_fit["mean"],
        "spread_ratio_live_paired": on_live["mean"],
        "fit_paired": on_fit,
        "live_paired": on_live,
        "target": "paired on the fit nearer the truth than paired on live Elo, in every season",
        "target_met": all(abs(f - 1.0) < abs(v - 1.0) for f, v in zip(fit, live, strict=True)),
    }


def run_all(
    progress: Callable[[float], None],
    large: bool,
    spread: bool,
    bots: int = 200,
    matches: int = 100_000,
    coverage: bool = False,
) -> dict:
    out: dict = {"steadiness": run_steadiness(bots, matches)}
    progress(0.2)
    if large:
        out["large"] = run_large()
    progress(0.5)
    if coverage:
        out["coverage"] = [
            run_coverage(200, 20, 100),
            run_coverage(2000, 3, 100),
            run_coverage(200, 6, 100, matchmaking=True),
            run_coverage(2000, 1, 100, matchmaking=True),  # pairs in Python: ~100x the 200-bot one
            run_coverage(200, 20, 100, band=10),
            run_coverage(2000, 3, 100, band=50),
        ]
    progress(0.6)
    if spread:
        out["spread"] = run_spread()
    progress(1.0)
    return out
