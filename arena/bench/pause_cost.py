"""What fair clocks cost per move, part of `arena bench sandbox`.

Real bwrap matches of `sample_bots/python/random` against itself (a bot that waits for its turn,
as most do), one per pause mode and round, the modes alternated round by round: the idle bot never
paused, paused on every move (SIGSTOP/SIGCONT to its process group: the design before), and paused
once it has pondered (today: two reads of its cgroup's CPU per move until then). Per move, after
both joined: this process's CPU (the referee's loop, where pause and resume run) and the two bots'
cgroup CPU (where stopping and waking every thread of a bot shows). Those per-match figures carry
the noise of whole matches; `pairs` isolates the mechanism: pause+resume pairs back to back on one
waiting bwrap bot with five threads, watched against SIGSTOP/SIGCONT, alternated in blocks.
"""

from __future__ import annotations

import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.bench.sandbox import PAUSE_MODES, HandleKeeper


def _self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


WAITER = """
import threading, time
for _ in range(4):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
print("up", flush=True)
time.sleep(600)
"""


def pairs(blocks: int = 10, per_block: int = 500) -> dict[str, dict[str, float]]:
    """CPU per pause+resume pair on a waiting bot: this process's (the referee's side) and the bot's."""
    from arena.bench.sandbox import write_bundle
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.bwrap import BwrapLauncher
    from arena.sandbox.launcher import Limits

    samples: dict[str, list[tuple[float, float]]] = {"watch": [], "signal": []}
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        Path(tmp).chmod(0o755)
        bundle = load_bundle(write_bundle(Path(tmp) / "waiter", "waiter", WAITER))
        proc = BwrapLauncher().start(bundle, ["python3", "bot.py"], {}, Limits(), socket_path=None)
        try:
            deadline = time.monotonic() + 30
            while "up" not in proc.output() and time.monotonic() < deadline:
                time.sleep(0.02)
            if proc.cgroup is None or proc.cpu_seconds() is None:
                return {}
            for _ in range(blocks):
                for mode in samples:
                    proc.pondered = mode == "signal"
                    s0, b0 = _self_cpu(), proc.cpu_seconds() or 0.0
                    for _ in range(per_block):
                        proc.pause()
                        proc.resume()
                    s1, b1 = _self_cpu(), proc.cpu_seconds() or 0.0
                    samples[mode].append(((s1 - s0) / per_block * 1e6, (b1 - b0) / per_block * 1e6))
        finally:
            proc.kill()
    return {
        mode: {
            "referee_us": round(statistics.median(r[0] for r in rows), 1),
            "bot_us": round(statistics.median(r[1] for r in rows), 1),
        }
        for mode, rows in samples.items()
    }


def run(rounds: int = 5, deals: int = 10, progress: Callable[[float], None] | None = None) -> dict[str, Any]:
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.bwrap import BwrapLauncher
    from arena.workers.match import play_match

    bundle = load_bundle(Path(__file__).resolve().parents[2] / "sample_bots" / "python" / "random")
    launcher = HandleKeeper(BwrapLauncher())
    samples: dict[str, list[tuple[float, float]]] = {mode: [] for mode in PAUSE_MODES}
    caught: dict[str, int] = {mode: 0 for mode in PAUSE_MODES}
    for r in range(rounds):
        for mode in PAUSE_MODES if r % 2 == 0 else tuple(reversed(PAUSE_MODES)):
            label = f"pausecost{r}-{mode}"
            launcher.pause_always = mode == "always"
            seats = [f"{label}-seat{s}" for s in (0, 1)]
            at: dict[str, float] = {}

            def on_event(ev: dict[str, Any], at: dict[str, float] = at, seats: list[str] = seats) -> None:
                if ev["event"] == "started":
                    at["bots"] = sum(launcher.handle(s).cpu_seconds() or 0.0 for s in seats)
                    at["self"] = _self_cpu()

            outcome = play_match(
                (bundle, bundle),
                rules=Rules(max_deals=deals),
                seed=r,
                time_control=TimeControl(),
                launcher=launcher,
                on_event=on_event,
                match_id=label,
                pause_idle=mode != "off",
            )
            referee = _self_cpu() - at["self"]
            bots = sum(launcher.handle(s).cpu_seconds() or 0.0 for s in seats) - at["bots"]
            moves = max(1, sum(outcome.record.timing.moves))
            samples[mode].append((referee / moves * 1e6, bots / moves * 1e6))
            if mode == "pondering":
                caught[mode] += sum(bool(getattr(launcher.handle(s), "pondered", False)) for s in seats)
        if progress:
            progress((r + 1) / rounds)
    result: dict[str, Any] = {"rounds": rounds, "deals": deals, "modes": {}}
    for mode, rows in samples.items():
        referee = statistics.median(row[0] for row in rows)
        bots = statistics.median(row[1] for row in rows)
        result["modes"][mode] = {
            "referee_us": round(referee),
            "bots_us": round(bots),
            "total_us": round(referee + bots),
        }
    off = result["modes"]["off"]["total_us"]
    for mode in PAUSE_MODES:
        result["modes"][mode]["over_off_us"] = result["modes"][mode]["total_us"] - off
    result["pondering_bots_caught"] = caught["pondering"]
    result["pairs"] = pairs()
    return result
