"""`arena bench startup`: what a Python bot costs from its launch until it has joined the match.

Real bwrap matches of one deal between two `sample_bots/python/random` (speaking gRPC), each seat's start-up CPU
read from its own cgroup (the chain from its cgroup join on: bwrap, the uid switch, the interpreter,
`import grpc, arena.sdk`, connecting and `Join`) at the moment the referee has both joins, and the wall
time from the match's launch to that moment. Two runtimes, alternated match by match in one run so
that drifting load hits both alike: the lean prefix a bot gets now, and the whole virtualenv (with
its `.pth` import hooks) as before, the baseline (arena/sandbox/runtime.py).
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.bench.sandbox import HandleKeeper

VARIANTS = {"lean prefix": False, "whole venv (before)": True}  # name -> BwrapLauncher(full_venv=...)


def _sample_bot() -> Path:
    return Path(__file__).resolve().parents[2] / "sample_bots" / "python" / "random"


def _one(launcher: HandleKeeper, bundle: Any, label: str, seed: int) -> dict[str, float]:
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.workers.match import play_match

    joined: dict[str, float] = {}

    def on_event(ev: dict[str, Any]) -> None:
        if ev["event"] == "started":
            joined["wall"] = time.perf_counter() - t0
            joined["cpu"] = sum(launcher.handle(f"{label}-seat{s}").cpu_seconds() or 0.0 for s in (0, 1))

    t0, cpu0 = time.perf_counter(), time.process_time()
    outcome = play_match(
        (bundle, bundle),
        rules=Rules(max_deals=1),
        seed=seed,
        # It measures the start-up, not judges it: a container's start on a busy machine may pass the
        # default 10 s (both seats STARTUP_FAILED under the Docker launcher at load 10).
        time_control=TimeControl(startup=60.0),
        launcher=launcher,
        on_event=on_event,
        match_id=label,
    )
    if outcome.verdicts != ("OK", "OK") or "cpu" not in joined:
        raise RuntimeError(f"the start-up bench match {label} did not play cleanly: {outcome.verdicts}")
    referee = time.process_time() - cpu0  # this process: the referee, the launches, a stdio bot's lines
    total = sum(launcher.handle(f"{label}-seat{s}").cpu_seconds() or 0.0 for s in (0, 1))
    return {
        "join_wall_ms": joined["wall"] * 1000,
        "join_cpu_ms": joined["cpu"] * 500,
        "bot_cpu_ms": total * 500,
        "referee_cpu_ms": referee * 1000,
    }


def run(rounds: int = 10, progress: Callable[[float], None] = lambda f: None) -> dict[str, Any]:
    """Medians per variant over `rounds` matches each; CPU figures are per bot."""
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.bwrap import BwrapLauncher

    # as a gRPC bot: its Join comes after the imports (the sample ships as a stdio bot, whose seat joins
    # when its sandbox is up, before the interpreter starts)
    bundle = dataclasses.replace(load_bundle(_sample_bot()), protocol="grpc")
    launchers = {name: HandleKeeper(BwrapLauncher(full_venv=full)) for name, full in VARIANTS.items()}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    for r in range(rounds):
        order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
        for name in order:
            samples[name].append(
                _one(launchers[name], bundle, f"startup{r}-{len(samples[name])}{name[0]}", r)
            )
        progress((r + 1) / rounds)
    result: dict[str, Any] = {"rounds": rounds, "bot": "sample_bots/python/random", "variants": {}}
    for name, rows in samples.items():
        result["variants"][name] = {k: round(statistics.median(row[k] for row in rows), 1) for k in rows[0]}
    lean, before = (result["variants"][n] for n in VARIANTS)
    result["join_cpu_saved_ms"] = round(before["join_cpu_ms"] - lean["join_cpu_ms"], 1)
    result["join_cpu_ratio"] = round(lean["join_cpu_ms"] / before["join_cpu_ms"], 3)
    result["join_wall_ratio"] = round(lean["join_wall_ms"] / before["join_wall_ms"], 3)
    return result
