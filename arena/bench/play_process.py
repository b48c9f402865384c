"""`arena bench play`: what the `arena play` process itself costs, as a whole and in its exit (from
the command's end to the process's), with the collector frozen at exit (`arena.cli.main`, now)
against not (the same process, unfrozen again just before it exits: the exit before), alternated.

Each run is `arena play` of the random sample against itself for one deal, started the way the
console script starts it. The exit is what the process's rusage (itself and the children it reaped)
adds after the command returned; the whole is the process's own CPU (its bots run in their sandboxes
and are not counted). Medians over the rounds.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

RANDOM = Path(__file__).resolve().parents[2] / "sample_bots" / "python" / "random"
VARIANTS = ("frozen", "unfrozen")

# The console script's `sys.exit(main())`, marking the command's end with this process's CPU so far.
_WRAPPER = """
import gc, os, resource, sys, time
from arena.cli import main
code = main(sys.argv[1:])
if os.environ["ARENA_BENCH_VARIANT"] == "unfrozen":
    gc.unfreeze()
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
with open(os.environ["ARENA_BENCH_MARK"], "w") as mark:
    mark.write("%r %r %r" % (own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime, time.monotonic()))
sys.exit(code)
"""


def _one(variant: str, home: Path, mark: Path, sandbox: str) -> dict[str, float]:
    argv = [sys.executable, "-c", _WRAPPER, "play", str(RANDOM), str(RANDOM), "--deals", "1", "--seed", "1",
            "--sandbox", sandbox]  # fmt: skip
    env = {
        **os.environ,
        "ARENA_HOME": str(home),
        "ARENA_BENCH_VARIANT": variant,
        "ARENA_BENCH_MARK": str(mark),
    }
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.monotonic()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if status != 0 or not mark.exists():
        raise RuntimeError(f"arena play failed (wait status {status}): {err[-1500:]}")
    own, kids, at = (float(x) for x in mark.read_text().split())
    mark.unlink()
    total = usage.ru_utime + usage.ru_stime  # the process and every child it reaped
    return {
        "process_ms": own * 1000,
        "exit_cpu_ms": (total - own - kids) * 1000,
        "exit_wall_ms": (ended - at) * 1000,
    }


def run(rounds: int = 9, sandbox: str = "bwrap", progress: Callable[[float], None] | None = None) -> dict:
    figures: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="arena-bench-play-") as tmp:
        home, mark = Path(tmp) / "home", Path(tmp) / "mark"
        _one("frozen", home, mark, sandbox)  # warm-up: page cache, the sandbox's first start
        for i in range(rounds):
            for variant in VARIANTS if i % 2 == 0 else VARIANTS[::-1]:
                figures[variant].append(_one(variant, home, mark, sandbox))
            if progress is not None:
                progress((i + 1) / rounds)
    med = {
        v: {k: round(statistics.median(f[k] for f in figures[v]), 2) for k in figures[v][0]} for v in VARIANTS
    }
    return {
        "rounds": rounds,
        "sandbox": sandbox,
        "load": os.getloadavg()[0],
        "medians": med,
        "exit_ratio": round(med["frozen"]["exit_cpu_ms"] / med["unfrozen"]["exit_cpu_ms"], 3),
    }
