"""`arena bench referee --instructions`: the referee's per-move cost in instructions, which do not
depend on the load, against the bare echo's per round trip (docs/referee.md, "The benchmark").

Wall times on a shared VM swing by 10-20% from run to run, more than a change to the per-move path
moves them. Each side is played twice, short and long, in its own process under `valgrind
--tool=callgrind` (the code of `arena.bench.referee`: the same trivial bot, launched the same way,
not counted), and the difference between the two runs over the difference in moves is the cost of
one more move: start-up, imports and the warm-up cancel out. Only the referee loop's thread is
counted, as the wall bench's CPU figure is: gRPC's pollers and the other threads wake on timers, so
their counts grow with the (slowed) wall time, and the echo's whole-process count moved by 15%
between runs, where its loop thread's moves by under 1%. Two processes run at a time.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

MOVES_PER_DEAL = 32
#: (side, argument) of the four runs: deals of a referee match, round trips of the echo
RUNS = (("referee", "short"), ("referee", "long"), ("echo", "short"), ("echo", "long"))

LOOP_THREAD = 2  # callgrind's number of the first thread the program starts: the referee loop
# Run in the counted process: the loop first, one unmeasured warm-up, then the side's own run.
_PROGRAM = """
import asyncio, sys, tempfile
from pathlib import Path
from arena.referee.loop import referee_loop, run_sync
referee_loop()
from arena.engine import Rules
from arena.bench import referee as bench
side, deals = sys.argv[1], int(sys.argv[2])
if side == "referee":
    bench._referee_round(1, seed=999)
    bench._referee_round(deals, seed=1000)
else:
    template = bench.typical_turn_request(Rules())
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        run_sync(bench._baseline(32, template, Path(tmp)))
        run_sync(bench._baseline(deals * 32, template, Path(tmp)))
"""
_TOTALS = re.compile(r"^totals:\s*(\d+)", re.MULTILINE)


def available() -> str | None:
    """Why the count cannot run here, or None."""
    return None if shutil.which("valgrind") else "valgrind is not installed (Debian package valgrind)"


def _count(side: str, deals: int) -> int:
    """Instructions of the referee loop's thread in one process that plays `deals` deals' worth of
    moves on `side`."""
    with tempfile.TemporaryDirectory(prefix="arena-callgrind-") as tmp:
        out = Path(tmp) / "out"
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}",
             sys.executable, "-c", _PROGRAM, side, str(deals)],
            capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        loop = Path(f"{out}-{LOOP_THREAD:02d}")
        found = _TOTALS.findall(loop.read_text()) if loop.exists() else []
    if done.returncode != 0 or not found:
        raise RuntimeError(f"the counted {side} run failed (exit {done.returncode}): {done.stderr[-1500:]}")
    return int(found[0])


def run(short: int = 5, long: int = 15, progress: Callable[[float], None] | None = None) -> dict:
    """Instructions per move of the referee and per round trip of the echo, and their ratio."""
    why = available()
    if why is not None:
        raise RuntimeError(why)
    deals = {"short": short, "long": long}
    finished: list[str] = []

    def one(job: tuple[str, str]) -> int:
        count = _count(job[0], deals[job[1]])
        finished.append(job[0])
        if progress is not None:
            progress(len(finished) / len(RUNS))
        return count

    with ThreadPoolExecutor(2) as pool:
        counts = dict(zip(RUNS, pool.map(one, RUNS), strict=True))
    moves = (long - short) * MOVES_PER_DEAL
    per = {side: (counts[(side, "long")] - counts[(side, "short")]) / moves for side in ("referee", "echo")}
    return {
        "deals": [short, long],
        "moves": moves,
        "counts": {f"{side} {length}": n for (side, length), n in counts.items()},
        "referee_per_move": round(per["referee"]),
        "echo_per_round_trip": round(per["echo"]),
        "ratio": round(per["referee"] / per["echo"], 3),
    }
