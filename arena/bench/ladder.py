"""Ladder benchmarks.

`run_ladder`: matches per minute of a season of the sample Python bots (or the Node or stdio
samples) through the whole ladder (store, matchmaking, worker pool, sandboxed referee,
one-transaction recording) at concurrency 1 and 2, against a baseline measured in the same run: the
same number of matches played by calling `play_match` directly, one after another, with no store and
no pool. The baseline's matches give the CPU per match (this process's, where the referee runs, and
each bot's cgroup), split into phases at the moment both bots have joined; the season runs add the
season parent's own CPU per match (this process while it drives the pool: claiming, matchmaking,
recording; the matches run in worker processes, whose bots this process cannot see). From their sum,
the CPU ceiling of the cores: the matches/min they could play if CPU were all a season needed.

`run_ratings`: the season fit for 100,000 matches among 200 bots (target < 2 s), against the classic
iterative minorisation-maximisation fit in plain Python on the same matches.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import tempfile
import time
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SAMPLE_BOTS = ("random", "greedy", "tactician")
#: The stdio field (`arena bench ladder --field stdio`): the compiled greedy ports, quick to build.
STDIO_BOTS = ("c", "go", "rust")
STDIO_DIR = Path(__file__).resolve().parents[2] / "sample_bots" / "stdio"
#: The Node field (`arena bench ladder --field node`): the gRPC samples that run on Node.js.
NODE_BOTS = ("node", "typescript")
RATINGS_TARGET_S = 2.0


PHASES = (
    "bots: start-up until Join",
    "bots: the match",
    "referee: launch until both joined",
    "referee: the match, its record, kill",
)
#: The warm start's own cost, over the baseline's matches: the zygotes' start-up and their forks.
ZYGOTE_PHASE = "zygotes: start-up and forks"
#: The season's process itself, over the ladder's matches (both concurrencies): claims, matchmaking,
#: recording and the pool's bookkeeping. Not a match's CPU, but every season match costs it.
PARENT_PHASE = "season parent: claim, pair, record"


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _sample_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "sample_bots" / "python"


def _baseline_match(keeper: Any, a: Any, b: Any, i: int, tag: str) -> tuple[dict[str, float], float]:
    """One direct play_match: its CPU by phase (this process's; each bot's cgroup) and wall seconds."""
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.workers.match import play_match

    seats = [f"bench{tag}{i}-seat{s}" for s in (0, 1)]
    at: dict[str, float] = {"self": _self_cpu()}

    def on_event(ev: dict[str, Any]) -> None:
        if ev["event"] == "started":  # both bots have joined
            at["bots_joined"] = sum(keeper.handle(s).cpu_seconds() or 0.0 for s in seats)
            at["self_joined"] = _self_cpu()

    start = time.perf_counter()
    play_match(
        (a, b), rules=Rules(), seed=1000 + i, time_control=TimeControl(), launcher=keeper,
        match_id=f"bench{tag}{i}", on_event=on_event,
    )  # fmt: skip
    wall = time.perf_counter() - start
    used = sum(keeper.handle(s).cpu_seconds() or 0.0 for s in seats)
    joined_bots, joined_self = at.get("bots_joined", used), at.get("self_joined", at["self"])
    return {
        "bots: start-up until Join": joined_bots,
        "bots: the match": used - joined_bots,
        "referee: launch until both joined": joined_self - at["self"],
        "referee: the match, its record, kill": _self_cpu() - joined_self,
    }, wall


def _zygote_cpu(launcher: Any) -> float:
    """CPU of the zygotes alive now (their start-up and forks; a child's own CPU is in its leaf)."""
    pool = getattr(launcher, "warm", None)
    return sum(z.proc.cpu_seconds() or 0.0 for z in pool.zygotes()) if pool is not None else 0.0


def _figures(phases: dict[str, float], seconds: float, matches: int) -> dict[str, Any]:
    def part(prefix: str, exclude: tuple[str, ...] = ()) -> float:
        ms = sum(v for k, v in phases.items() if k.startswith(prefix) and not k.startswith(exclude))
        return round(1000 * ms / matches, 1)

    cpu = {
        "referee": part("referee"),
        "bots": part("", exclude=("referee", "season")),  # the zygotes too: they exist for the bots
        "season_parent": part("season"),
    }
    return {
        "baseline_matches_per_min": round(60 * matches / seconds, 1),
        "cpu_ms_per_match": cpu,
        "phases_cpu_ms_per_match": {k: round(1000 * v / matches, 1) for k, v in phases.items()},
    }


def _field(field: str, work: Path, warm: bool) -> dict[str, list[Path]]:
    """Each mode's bundle folders. `python`: the Python samples as shipped (they speak the stdio
    lines through the SDK), "cold"; with `warm`, those are "warm" and "cold" are copies that speak
    gRPC, as every Python sample did before issue #18 (docs/ladder.md). `stdio`: the compiled stdio samples whose tools are here, "direct" (the referee
    speaks their lines) and "bridge" (copies whose run line starts the Python stdio bridge first,
    as every stdio bot ran before: the baseline)."""
    if field == "python":
        shipped = [_sample_dir() / b for b in SAMPLE_BOTS]
        if not warm:
            return {"cold": shipped}
        before = []
        for src in shipped:
            copy = work / "grpc" / src.name
            shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__"))
            toml = (copy / "bot.toml").read_text()
            (copy / "bot.toml").write_text(re.sub(r'(?m)^protocol = "stdio".*$', 'protocol = "grpc"', toml))
            before.append(copy)
        return {"cold": before, "warm": shipped}
    if field == "node":
        from arena.sandbox.languages import missing_tools

        return {"node": [STDIO_DIR.parent / b for b in NODE_BOTS if not missing_tools(b)]}
    from arena.sandbox.bundle import STDIO_BRIDGE
    from arena.sandbox.languages import missing_tools

    direct = [STDIO_DIR / b for b in STDIO_BOTS if not missing_tools(b)]
    bridged = []
    for src in direct:
        copy = work / "bridged" / src.name
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("bot", "target"))
        toml = (copy / "bot.toml").read_text()
        run = tomllib.loads(toml)["run"]
        toml = re.sub(r"(?m)^run = .*$", f"run = {json.dumps([*STDIO_BRIDGE, *run])}", toml)
        (copy / "bot.toml").write_text(re.sub(r'(?m)^protocol = "stdio"', 'protocol = "grpc"', toml))
        bridged.append(copy)
    return {"direct": direct, "bridge": bridged}


def run_ladder(
    matches: int = 12,
    launcher: str = "bwrap",
    progress: Callable[[float], None] = lambda f: None,
    warm: bool = False,
    field: str = "python",
) -> dict:
    """Matches/minute: direct play_match baseline, then the ladder at concurrency 1 and 2. With
    `warm`, each measurement is made twice in the same run, today's cold launch and the warm start
    (docs/sandbox.md "Warm start"): the baseline's matches alternate between the two launchers, the
    ladder runs cold then warm at each concurrency; result["warm"] holds the warm figures. With
    `field="stdio"` the bots are the stdio samples, and the two modes are the referee speaking their
    lines and the Python bridge before it (result["bridge"], the baseline). With `field="node"`, the
    Node.js samples (one mode). Every mode's phase table ends with the season parent's CPU per match
    (`PARENT_PHASE`), and its CPU ceiling counts it."""
    from arena.bench.sandbox import HandleKeeper
    from arena.ladder.runner import SeasonRun
    from arena.ladder.seasons import create_season, start_season
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.launchers import get_launcher
    from arena.store import Store
    from arena.workers.execute import make_launcher, run_job
    from arena.workers.pool import Progress, run_pool
    from arena.workers.submit import submit_bundle

    work = Path(tempfile.mkdtemp(prefix="arena-bench-"))
    fields = _field(field, work, warm)
    modes = tuple(fields)
    bots = [p.name for p in fields[modes[0]]]
    if len(bots) < 2:
        raise RuntimeError(f"the {field} field needs two sample bots whose tools are here; found {bots}")
    steps = 3 * matches * len(modes)
    finished = 0

    def tick() -> None:
        nonlocal finished
        finished += 1
        progress(min(1.0, finished / steps))

    per_mode: dict[str, dict[str, Any]] = {}
    stores: dict[str, Store] = {}
    with contextlib.ExitStack() as cleanup:
        cleanup.callback(shutil.rmtree, work, ignore_errors=True)
        for mode in modes:  # a store per field of bots
            home = work / mode
            home.mkdir()
            stores[mode] = store = Store.open(f"sqlite:///{home}/arena.db", home=str(home))
            cleanup.callback(store.close)
            for i, path in enumerate(fields[mode]):
                submit_bundle(store, path, name=path.name, owner=f"owner{i}", launcher=launcher)
        # baseline: play_match in a loop (the same pairings the ladder cycles through), modes alternated
        loaded = {mode: [load_bundle(p) for p in paths] for mode, paths in fields.items()}
        keepers = {m: HandleKeeper(make_launcher(launcher)) for m in modes if m != "warm"}
        if warm:
            keepers["warm"] = HandleKeeper(get_launcher(launcher, warn=False, warm=True))
        phases = {m: dict.fromkeys(PHASES, 0.0) for m in modes}  # CPU seconds over the loop's matches
        seconds = dict.fromkeys(modes, 0.0)
        for i in range(matches):
            for mode in modes if i % 2 == 0 else modes[::-1]:
                pair = loaded[mode]
                a, b = pair[i % len(pair)], pair[(i + 1) % len(pair)]
                got, wall = _baseline_match(keepers[mode], a, b, i, mode)
                for k, v in got.items():
                    phases[mode][k] += v
                seconds[mode] += wall
                tick()
        if warm:
            phases["warm"][ZYGOTE_PHASE] = _zygote_cpu(keepers["warm"].inner)
            keepers["warm"].inner.warm.close()
        ladder: dict[str, dict[str, float]] = {mode: {} for mode in modes}
        parent = dict.fromkeys(modes, 0.0)  # this process's CPU seconds while it ran each mode's seasons
        for conc in (1, 2):
            for mode in modes:
                name = f"bench-{mode}-c{conc}"
                create_season(stores[mode], name, seed=conc)
                start_season(stores[mode], name)
                source = SeasonRun(stores[mode], name, matches=matches, launcher=launcher)
                base = finished

                def on_progress(p: Progress, base: int = base) -> None:
                    progress(min(1.0, (base + p.done) / steps))

                previous = os.environ.get("ARENA_WARM_START")
                os.environ["ARENA_WARM_START"] = "1" if mode == "warm" else "0"  # the workers' launchers
                try:
                    start, cpu = time.perf_counter(), _self_cpu()
                    run_pool(source, run_job, concurrency=conc, on_progress=on_progress)
                    elapsed = time.perf_counter() - start
                    parent[mode] += _self_cpu() - cpu
                finally:
                    if previous is None:
                        os.environ.pop("ARENA_WARM_START")
                    else:
                        os.environ["ARENA_WARM_START"] = previous
                finished += matches
                ladder[mode][f"ladder_c{conc}_matches_per_min"] = round(60 * matches / elapsed, 1)
        for mode in modes:  # each concurrency's season played `matches`: the mean per match of both
            phases[mode][PARENT_PHASE] = parent[mode] / 2
            per_mode[mode] = {**_figures(phases[mode], seconds[mode], matches), **ladder[mode]}
    cores = len(os.sched_getaffinity(0))
    for r in per_mode.values():
        r["c2_vs_c1"] = round(r["ladder_c2_matches_per_min"] / r["ladder_c1_matches_per_min"], 2)
        r["c1_vs_baseline"] = round(r["ladder_c1_matches_per_min"] / r["baseline_matches_per_min"], 2)
        per_match = sum(r["cpu_ms_per_match"].values()) / 1000
        if per_match > 0:
            r["cpu_ceiling_matches_per_min"] = round(60 * cores / per_match, 1)
            r["c2_of_ceiling"] = round(r["ladder_c2_matches_per_min"] / r["cpu_ceiling_matches_per_min"], 2)
    result: dict[str, Any] = {
        "bots": bots, "matches": matches, "launcher": launcher, "rules": "default (flags=1)", "cores": cores,
        "field": field, **per_mode[modes[0]],
    }  # fmt: skip
    if field == "stdio":
        new, old = per_mode["direct"], per_mode["bridge"]
        result["bridge"] = old
        result["direct_vs_bridge"] = {
            f"c{conc}": round(
                new[f"ladder_c{conc}_matches_per_min"] / old[f"ladder_c{conc}_matches_per_min"], 2
            )
            for conc in (1, 2)
        }
        result["direct_vs_bridge"]["cpu_per_match"] = round(
            sum(new["cpu_ms_per_match"].values()) / sum(old["cpu_ms_per_match"].values()), 2
        )
    if warm:
        w, c = per_mode["warm"], per_mode["cold"]
        result["warm"] = w
        result["warm_vs_cold"] = {
            "c1": round(w["ladder_c1_matches_per_min"] / c["ladder_c1_matches_per_min"], 2),
            "c2": round(w["ladder_c2_matches_per_min"] / c["ladder_c2_matches_per_min"], 2),
            "cpu_per_match": round(
                sum(w["cpu_ms_per_match"].values()) / sum(c["cpu_ms_per_match"].values()), 2
            ),
        }
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
