"""Per-bot cgroups on whatever hierarchy the host runs: cgroup v1, v2, or hybrid, behind one interface.

The launchers call `create()` for a bot's group and use the `BotCgroup` methods below; which kernel
interface sits behind them is decided once per process by `detect()`:

- **v2** (`/sys/fs/cgroup` is cgroup2, as on current Debian, Ubuntu, Fedora): one leaf per bot in a
  delegated subtree with memory, pids and cpu enabled (`cgroups_v2.py`);
- **v1** and **hybrid** (v1 controllers, plus an empty cgroup2 at `/sys/fs/cgroup/unified`): one
  group per controller per bot (`cgroups_v1.py`);
- **none**: no writable cgroup at all; the launchers fall back to rlimits and signals.

Groups are named `<owner pid>.<owner start time>.<seq>-<label>`, so that a later run can tell a group
whose referee died (and sweep it) from one that belongs to a live referee.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


def write_file(path: Path, value: str | int) -> bool:
    """Write a cgroup control file; False when the kernel refuses (a missing controller, a gone group)."""
    try:
        path.write_text(str(value))
        return True
    except OSError:
        return False


class KeptFile:
    """A control file read over and over through one descriptor: `pread` at offset 0 makes the
    kernel write its text afresh, about 0.4 us against about 10 us for open, read and close (the fair
    clock reads a bot's CPU twice a move). Empty once closed or when the group is gone. Reads and
    `close()` share a lock, so a read never uses a descriptor number that was closed and reused."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._closed = False
        self._lock = threading.Lock()

    def read(self) -> str:
        with self._lock:
            if self._closed:
                return ""
            try:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                return os.pread(self._fd, 4096, 0).decode()
            except OSError:
                return ""

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def signal_pids(pids: list[int], sig: int) -> None:
    """Send `sig` to each of a group's tasks; one that is gone, or not ours to signal, is skipped."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def read_file(path: Path) -> str:
    """A cgroup control file's text; empty when it cannot be read (the group is gone)."""
    try:
        return path.read_text()
    except OSError:
        return ""


ROOT = Path(os.environ.get("ARENA_CGROUP_ROOT", "/sys/fs/cgroup"))
PARENT = "elfern-arena"
#: What a bot's group can do, by name (the same names on every version).
KINDS = ("memory", "pids", "cpu", "freezer", "kill")
#: The kernel's weight of a task at niceness 0 to 19 (`sched_prio_to_weight`, kernel/sched/core.c):
#: each step is about 10% less CPU against a task one step lower.
NICE_WEIGHT = (1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15)
#: Limits that must be capped per bot for the sandbox to be sound; rlimits alone are too weak
#: (RLIMIT_AS is 4 GiB so that Node starts; RLIMIT_NPROC counts a whole uid).
ESSENTIAL = ("memory", "pids")


def launcher_nice() -> int:
    """This process's niceness, 0 to 19 (a raised priority counts as 0): the bots it launches are
    weighted by it (scaled_weight)."""
    return min(19, max(0, os.getpriority(os.PRIO_PROCESS, 0)))


def scaled_weight(weight: int, nice: int) -> int:
    """A bot group's CPU weight for a launcher at niceness `nice`: `weight` scaled as the kernel
    scales a task's weight from niceness 0 to `nice` (8192 at 10: 880). A bot's cgroup is a
    scheduling group of its own, where the niceness it inherited weighs nothing against tasks
    outside it: the group's weight carries it instead, so the bots of a niced launcher (the players of
    `arena serve --players-nice`) yield the cores to the server's calls as the launcher does."""
    return max(1, round(weight * NICE_WEIGHT[nice] / NICE_WEIGHT[0]))


def _stat_fields(pid: int) -> list[str]:
    """The fields of /proc/<pid>/stat after the command name (state first); empty when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def process_start_time(pid: int) -> str | None:
    """The kernel start time (in clock ticks) of `pid`, to tell a live owner from a reused pid."""
    fields = _stat_fields(pid)
    return fields[19] if len(fields) > 19 else None


_tag: tuple[int, str] = (0, "")


def owner_tag() -> str:
    """`<pid>.<start time>` of this process: the prefix of every group and work dir it creates.
    Read from /proc once per process (a forked child has its own)."""
    global _tag
    pid = os.getpid()
    if _tag[0] != pid:
        _tag = (pid, f"{pid}.{process_start_time(pid) or 0}")
    return _tag[1]


def owner_alive(tag: str) -> bool:
    """Whether the process that created a group or dir named `tag...` still runs. A zombie does
    not: a SIGKILLed referee whose parent has not reaped it yet must not shield its bots."""
    parts = tag.split(".")
    if len(parts) < 2 or not parts[0].isdigit():
        return False
    fields = _stat_fields(int(parts[0]))
    return len(fields) > 19 and fields[19] == parts[1] and fields[0] not in ("Z", "X")


#: Stale groups this process failed to sweep (a task it may not kill, one stuck in the kernel): not
#: tried again by every launch, each try costing its kill timeout; the next process tries again.
unsweepable: set[str] = set()


def sweepable(parent: Path, name: str) -> bool:
    """Whether the sweep should judge `parent/name`: one of ours, in a parent this process may
    write (an ordinary user cannot remove root's groups), not already failed here."""
    return is_group_name(name) and name not in unsweepable and os.access(parent, os.W_OK)


def is_group_name(name: str) -> bool:
    """Whether a directory name is one of ours (`<pid>.<start>.<seq>-<label>`), not a supervisor leaf."""
    head = name.split("-", 1)[0].split(".")
    return len(head) == 3 and all(part.isdigit() for part in head)


class BotCgroup(Protocol):
    """One bot's cgroup(s). Counters read 0 and controls return False where a kind is missing."""

    name: str

    def procs_files(self) -> list[str]:
        """The `cgroup.procs` files a wrapper writes its pid into before exec'ing the sandbox."""

    def has(self, kind: str) -> bool:
        """Whether `kind` (one of KINDS) is enforced or available for this group."""

    def pids(self) -> list[int]:
        """Processes in the group now."""

    def cpu_seconds(self) -> float | None:
        """CPU time of every task that ever ran in the group."""

    def oom_kills(self) -> int:
        """Tasks the OOM killer ended at the group's memory cap."""

    def memory_failcnt(self) -> int:
        """How often the memory cap was hit (reclaim included; not a verdict by itself)."""

    def pids_refused(self) -> int:
        """Forks/clones the pids cap refused."""

    def freeze(self) -> bool:
        """Stop every task atomically (the fair-clock pause); False when there is no freezer."""

    def thaw(self) -> bool:
        """Undo freeze()."""

    def signal_all(self, sig: int) -> None:
        """Send `sig` to every process in the group."""

    def kill_all(self, timeout: float = 5.0) -> bool:
        """Kill every task without letting one fork away; True when the group is empty."""

    def remove(self) -> None:
        """Kill what is left and delete the group (idempotent)."""

    def paths(self) -> list[Path]:
        """The group's directories (to check that nothing is left)."""


@dataclass(frozen=True)
class CgroupHost:
    """What this machine offers: the version, where bot groups go, and which kinds work here."""

    version: str  # "v1", "v2", "hybrid" or "none"
    base: str | None  # the directory (v2) or directories (v1) that hold the bots' groups
    kinds: tuple[str, ...]  # the KINDS a bot's group gets here
    reason: str = ""  # why a kind is missing, and what to do about it

    def weak(self) -> list[str]:
        """The ESSENTIAL limits that cannot be capped per bot by cgroups here (rlimits only)."""
        return [k for k in ESSENTIAL if k not in self.kinds]


def version(root: Path | None = None) -> str:
    """v2 when the mount is cgroup2 itself, hybrid/v1 when v1 controllers are mounted, else none."""
    root = root or ROOT
    if (root / "cgroup.controllers").exists():
        return "v2"
    if any((root / ctrl / "cgroup.procs").exists() for ctrl in ("memory", "pids", "cpuacct", "freezer")):
        return "hybrid" if (root / "unified" / "cgroup.controllers").exists() else "v1"
    return "none"


_host: CgroupHost | None = None
_host_lock = threading.Lock()


def detect(refresh: bool = False) -> CgroupHost:
    """Probe the hierarchy once per process (v2: also prepares the arena's delegated subtree)."""
    global _host
    with _host_lock:
        if _host is None or refresh:
            ver = version()
            if ver == "v2":
                from arena.sandbox import cgroups_v2

                _host = cgroups_v2.prepare(ROOT)
            elif ver in ("v1", "hybrid"):
                from arena.sandbox import cgroups_v1

                _host = cgroups_v1.prepare(ROOT, ver)
            else:
                _host = CgroupHost(
                    "none", None, (), f"no cgroup hierarchy is mounted at {ROOT}; memory and pids are rlimits"
                )
        return _host


def create(memory: int, pids: int, label: str = "bot") -> BotCgroup | None:
    """A bot's group with its memory and pids caps set; None when no cgroup is writable here."""
    host = detect()
    if host.version == "v2":
        from arena.sandbox import cgroups_v2

        return cgroups_v2.V2Cgroup.create(host, memory, pids, label)
    if host.version in ("v1", "hybrid"):
        from arena.sandbox import cgroups_v1

        return cgroups_v1.V1Cgroup.create(memory, pids, label)
    return None


def sweep_stale() -> list[str]:
    """Kill and remove groups left behind by referees that no longer run; return their names."""
    host = detect()
    if host.version == "v2":
        from arena.sandbox import cgroups_v2

        return cgroups_v2.sweep_stale(host)
    if host.version in ("v1", "hybrid"):
        from arena.sandbox import cgroups_v1

        return cgroups_v1.sweep_stale()
    return []


def leftovers(name: str) -> list[Path]:
    """Directories of a group called `name` that still exist (empty after a clean kill)."""
    host = detect()
    if host.version == "v2" and host.base:
        candidates = [Path(host.base) / name]
    else:
        from arena.sandbox.cgroups_v1 import CONTROLLERS, cpu_parent

        candidates = [ROOT / ctrl / PARENT / name for ctrl in CONTROLLERS]
        if cpu_parent()[0] != PARENT:  # a niced launcher's bots: their cpu part is apart
            candidates.append(ROOT / "cpu" / cpu_parent()[0] / name)
    return [p for p in candidates if p.exists()]


def weak_limits_warning() -> str | None:
    """One line for `arena demo`, `season run` and `arena worker` when memory or pids are rlimit-only."""
    host = detect()
    weak = host.weak()
    if not weak:
        return None
    return (
        f"warning: cgroup {host.version}: {' and '.join(weak)} cannot be capped per bot here "
        f"(rlimits only: a bot may take up to 4 GiB of address space or fork up to its uid's limit); "
        f"{host.reason or 'run as root or in a delegated cgroup'}. See `arena sandbox check`."
    )
