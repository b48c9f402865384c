"""Who used the cores during a phase of `arena bench serve --load`: the server process, its ladder
(the players' process, its matches and their sandboxed bots), the bench's own callers, the kernel's
own threads, and the rest of the machine. Read from /proc, in cores (CPU seconds per second of the
phase).

The kernel's threads (kworkers, ksoftirqd, ...) are apart because a sandboxed ladder makes them
work: every bot's sandbox has namespaces (its network's above all) and cgroups that the kernel tears
down in its own workers after the bot has exited, and that time is in no process of the bench.

A latency figure alone cannot tell a slow server from a starved one: on a machine whose two cores
are busy with other work, every call waits for a core. So the load bench reports these beside its
latencies, and "other" says how much of the machine was not the bench's at all.
"""

from __future__ import annotations

import os
import resource
import time
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
KTHREADD = 2  # the parent of every kernel thread
PROC = Path("/proc")


@dataclass(frozen=True)
class CpuSample:
    """CPU seconds used so far by each part, at monotonic time `at`."""

    at: float
    server: float  # the server process's threads, and the builds it has reaped
    ladder: float  # every process under the server (players, matches, bots), with those they reaped
    callers: float  # this process: the bench's callers
    machine: float  # every core of the machine, busy (not idle, not waiting for I/O)
    kernel: float = 0.0  # the kernel's own threads (children of kthreadd, pid 2)
    server_waiting: float = 0.0  # seconds the server's threads spent runnable, waiting for a core


def _fields(pid: int) -> list[str] | None:
    """Fields 3 on of /proc/PID/stat, or None once the process is gone."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _children() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if entry.name.isdigit() and (fields := _fields(int(entry.name))) is not None:
            found.setdefault(int(fields[1]), []).append(int(entry.name))
    return found


def _seconds(fields: list[str], reaped: bool) -> float:
    """utime + stime (fields 14, 15), plus the reaped children's (16, 17) when `reaped`."""
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def _waiting(pid: int) -> float:
    """Seconds the threads of `pid` now alive have spent runnable but not running (the second
    field of each thread's schedstat): time a call was ready and had no core."""
    total = 0
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return 0.0
    for task in tasks:
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def _machine() -> float:
    with open(PROC / "stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal, *_ = map(int, f.readline().split()[1:])
    return (user + nice + system + irq + softirq + steal) / TICK


def sample(server: int) -> CpuSample:
    """What the server (pid `server`), its descendants, this process and the machine have used."""
    own = _fields(server)
    tree = _children()
    ladder, stack = 0.0, list(tree.get(server, []))
    while stack:
        pid = stack.pop()
        if (fields := _fields(pid)) is not None:
            ladder += _seconds(fields, reaped=True)
        stack += tree.get(pid, [])
    kernel = 0.0
    for pid in tree.get(KTHREADD, []):
        if (fields := _fields(pid)) is not None:
            kernel += _seconds(fields, reaped=False)
    me = resource.getrusage(resource.RUSAGE_SELF)
    return CpuSample(
        at=time.monotonic(),
        server=_seconds(own, reaped=True) if own is not None else 0.0,
        ladder=ladder,
        callers=me.ru_utime + me.ru_stime,
        machine=_machine(),
        kernel=kernel,
        server_waiting=_waiting(server),
    )


def cores(before: CpuSample, after: CpuSample) -> dict[str, float]:
    """Cores each part used between two samples; `other`: the machine's busy cores that were none
    of the bench's and not the kernel's own threads (other programs on the same machine).
    `server_waiting`: how many of the server's threads were, on average, ready to run with no core
    to run on (0 on a machine with cores to spare; it tells a starved server from a slow one)."""
    span = max(after.at - before.at, 1e-9)
    used = {  # none below 0: a part's sum drops when one of its processes ends unreaped (a kworker)
        part: max(0.0, (getattr(after, part) - getattr(before, part)) / span)
        for part in ("server", "ladder", "callers", "kernel", "machine")
    }
    mine = used["server"] + used["ladder"] + used["callers"] + used["kernel"]
    used["other"] = max(0.0, used["machine"] - mine)
    used["server_waiting"] = max(0.0, (after.server_waiting - before.server_waiting) / span)
    return {part: round(value, 2) for part, value in used.items()}
