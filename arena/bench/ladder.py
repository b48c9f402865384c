"""Ladder benchmarks.

`run_ladder`: matches per minute of a season of the sample Python bots through the whole ladder
(store, matchmaking, worker pool, sandboxed referee, one-transaction recording) at concurrency 1 and
2, against a baseline measured in the same run: the same number of matches played by calling
`play_match` directly, one after another, with no store and no pool. The baseline's matches also
give the CPU per match (this process's, where the referee runs, and each bot's cgroup), and from it
the CPU ceiling of the cores: the matches/min they could play if CPU were all a match needed (the
pool's matches run in worker processes, whose bots this process cannot see).

`run_ratings`: the season fit for 100,000 matches among 200 bots (target < 2 s), against the classic
iterative minorisation-maximisation fit in plain Python on the same matches.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_BOTS = ("random", "greedy", "tactician")
RATINGS_TARGET_S = 2.0


def _sample_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "sample_bots" / "python"


def run_ladder(
    matches: int = 12, launcher: str = "bwrap", progress: Callable[[float], None] = lambda f: None
) -> dict:
    """Matches/minute: direct play_match baseline, then the ladder at concurrency 1 and 2."""
    from arena.bench.sandbox import HandleKeeper
    from arena.engine import Rules
    from arena.ladder.runner import SeasonRun
    from arena.ladder.seasons import create_season, start_season
    from arena.referee import TimeControl
    from arena.sandbox.bundle import load_bundle
    from arena.store import Store
    from arena.workers.execute import make_launcher, run_job
    from arena.workers.match import play_match
    from arena.workers.pool import Progress, run_pool
    from arena.workers.submit import submit_bundle

    bots = [b for b in SAMPLE_BOTS if (_sample_dir() / b / "bot.toml").exists()]
    steps = 3 * matches
    finished = 0

    def tick() -> None:
        nonlocal finished
        finished += 1
        progress(min(1.0, finished / steps))

    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        store = Store.open(f"sqlite:///{tmp}/arena.db", home=tmp)
        for i, name in enumerate(bots):
            submit_bundle(store, _sample_dir() / name, name=name, owner=f"owner{i}", launcher=launcher)
        # baseline: play_match in a loop (the same pairings the ladder cycles through)
        bundles = [load_bundle(_sample_dir() / b) for b in bots]
        the_launcher = HandleKeeper(make_launcher(launcher))
        bots_cpu = 0.0
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self_cpu = usage.ru_utime + usage.ru_stime
        start = time.perf_counter()
        for i in range(matches):
            a, b = bundles[i % len(bundles)], bundles[(i + 1) % len(bundles)]
            play_match(
                (a, b),
                rules=Rules(),
                seed=1000 + i,
                time_control=TimeControl(),
                launcher=the_launcher,
                match_id=f"bench{i}",
            )
            bots_cpu += sum(the_launcher.handle(f"bench{i}-seat{s}").cpu_seconds() or 0.0 for s in (0, 1))
            tick()
        baseline = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_SELF)
        self_cpu = usage.ru_utime + usage.ru_stime - self_cpu
        result: dict[str, Any] = {
            "bots": bots,
            "matches": matches,
            "launcher": launcher,
            "rules": "default (flags=1)",
            "baseline_matches_per_min": round(60 * matches / baseline, 1),
            "cpu_ms_per_match": {
                "referee": round(1000 * self_cpu / matches, 1),
                "bots": round(1000 * bots_cpu / matches, 1),
            },
        }
        for conc in (1, 2):
            name = f"bench-c{conc}"
            create_season(store, name, seed=conc)
            start_season(store, name)
            source = SeasonRun(store, name, matches=matches, launcher=launcher)
            start = time.perf_counter()
            base = finished

            def on_progress(p: Progress, base: int = base) -> None:
                progress(min(1.0, (base + p.done) / steps))

            run_pool(source, run_job, concurrency=conc, on_progress=on_progress)
            elapsed = time.perf_counter() - start
            finished += matches
            result[f"ladder_c{conc}_matches_per_min"] = round(60 * matches / elapsed, 1)
        store.close()
    result["c2_vs_c1"] = round(result["ladder_c2_matches_per_min"] / result["ladder_c1_matches_per_min"], 2)
    result["c1_vs_baseline"] = round(
        result["ladder_c1_matches_per_min"] / result["baseline_matches_per_min"], 2
    )
    result["cores"] = len(os.sched_getaffinity(0))
    per_match = sum(result["cpu_ms_per_match"].values()) / 1000
    if per_match > 0:
        result["cpu_ceiling_matches_per_min"] = round(60 * result["cores"] / per_match, 1)
        result["c2_of_ceiling"] = round(
            result["ladder_c2_matches_per_min"] / result["cpu_ceiling_matches_per_min"], 2
        )
    return result


def synthetic_season(bots: int = 200, matches: int = 100_000, seed: int = 2026):
    """Matches among `bots` of known strength; draws keep each game's expected score on the Elo curve."""
    rng = np.random.default_rng(seed)
    true = rng.normal(1500, 200, bots)
    a = rng.integers(0, bots, matches)
    b = (a + rng.integers(1, bots, matches)) % bots
    from arena.ladder.fit import score_of

    p = score_of(true[a] - true[b])
    draw = np.minimum(0.1, 2 * np.minimum(p, 1 - p))
    u = rng.random(matches)
    score = np.where(u < p - draw / 2, 1.0, np.where(u < p + draw / 2, 0.5, 0.0))
    return true, a, b, score


def run_ratings(
    bots: int = 200,
    matches: int = 100_000,
    repeats: int = 3,
    progress: Callable[[float], None] = lambda f: None,
) -> dict:
    """Time the Newton fit (best of `repeats`) and the plain-Python MM baseline on the same season."""
    from arena.ladder.ratings import fit_ratings, naive_fit

    true, a, b, score = synthetic_season(bots, matches)
    times = []
    fit = None
    for i in range(repeats):
        start = time.perf_counter()
        fit = fit_ratings(bots, a, b, score)
        times.append(time.perf_counter() - start)
        progress((i + 1) / (repeats + 4))
    assert fit is not None, "repeats must be at least 1"
    listed = list(zip(a.tolist(), b.tolist(), score.tolist(), strict=True))
    start = time.perf_counter()
    naive, iterations = naive_fit(bots, listed)
    naive_s = time.perf_counter() - start
    progress(1.0)
    best = min(times)
    centred = true - true.mean() + 1500
    return {
        "bots": bots,
        "matches": matches,
        "fit_s": round(best, 4),
        "fit_newton_iterations": fit.iterations,
        "naive_s": round(naive_s, 3),
        "naive_iterations": iterations,
        "speedup": round(naive_s / best, 1),
        "max_abs_diff_elo": round(float(np.abs(np.array(naive) - fit.ratings).max()), 4),
        "rmse_vs_true_elo": round(float(np.sqrt(np.mean((fit.ratings - centred) ** 2))), 2),
        "mean_ci95_elo": round(float(fit.ci95.mean()), 1),
        "target_s": RATINGS_TARGET_S,
        "target_met": best < RATINGS_TARGET_S,
    }
