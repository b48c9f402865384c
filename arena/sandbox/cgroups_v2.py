"""cgroup v2 backend: a delegated subtree for the arena, one leaf per bot.

Where the subtree comes from (first that applies; docs/sandbox.md, "cgroup v2"):

1. `ARENA_CGROUP_BASE`: a directory an organiser delegated by hand (absolute, or relative to the mount).
2. The process's own cgroup, when it is delegated to it (systemd `Delegate=yes` marks it with the
   `trusted.delegate` xattr; for an ordinary user, a cgroup it may write is delegated). The arena
   moves its own processes into the leaf `elfern-arena-supervisor` first: cgroup v2 lets a group
   hand controllers to its children only while no process lives in it ("no internal processes").
3. As root on a host whose root cgroup it may write (a VM, a container host without systemd):
   `/sys/fs/cgroup/elfern-arena`.

memory, pids and cpu are enabled down to the bots' leaves. Each leaf gets `memory.max`,
`memory.swap.max` 0, `memory.oom.group` 1 (the OOM killer takes the whole bot), `pids.max` and
`cpu.weight`; the verdicts read `memory.events` (oom_kill) and `pids.events` (max), CPU time comes
from `cpu.stat`, the pause is `cgroup.freeze`, and kill is `cgroup.kill` (atomic: no fork escapes).
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
import time
from pathlib import Path

from arena.sandbox.cgroups import (
    PARENT,
    CgroupHost,
    KeptFile,
    launcher_nice,
    owner_alive,
    owner_tag,
    scaled_weight,
    signal_pids,
    sweepable,
    unsweepable,
)
from arena.sandbox.cgroups import read_file as _read
from arena.sandbox.cgroups import write_file as _write

SUPERVISOR = "elfern-arena-supervisor"
WANTED = ("memory", "pids", "cpu")
#: cpu.weight of the arena's own subtree against its siblings (default 100; 800 matches v1's
#: cpu.shares 8192 over 1024): the bot on move gets the CPU ahead of other work (docs/sandbox.md).
ARENA_CPU_WEIGHT = int(os.environ.get("ARENA_CPU_WEIGHT", "800"))
#: cpu.weight of each bot's leaf: bots share equally among themselves. A niced launcher's bots
#: (the players of `arena serve`) get it scaled by the niceness (11 at nice 10): in a delegated
#: subtree their leaves are siblings of the server's own leaf (SUPERVISOR, 100), which they then
#: yield to as the players' processes do (cgroups.scaled_weight).
BOT_CPU_WEIGHT = 100
FREEZE_WAIT = 0.5  # seconds to wait for `frozen 1` in cgroup.events (freezing is asynchronous)

_seq = itertools.count(1)
_seq_lock = threading.Lock()


def _keyed(path: Path, key: str) -> int:
    """The value of `key` in a flat-keyed file such as memory.events or cpu.stat."""
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def own_cgroup() -> str:
    """This process's cgroup v2 path (`0::/...` in /proc/self/cgroup)."""
    for line in _read(Path("/proc/self/cgroup")).splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return "/"


def _delegated(path: Path) -> bool:
    if not (
        os.access(path / "cgroup.procs", os.W_OK) and os.access(path / "cgroup.subtree_control", os.W_OK)
    ):
        return False
    if os.geteuid() != 0:
        return True  # an ordinary user may write only what was delegated to it
    for attr in ("trusted.delegate", "user.delegate"):
        try:
            if os.getxattr(path, attr) == b"1":
                return True
        except OSError:
            pass
    return False


def _enable(group: Path) -> set[str]:
    """Enable WANTED controllers for `group`'s children; return those now enabled."""
    offered = set(_read(group / "cgroup.controllers").split())
    for ctrl in WANTED:
        if ctrl in offered:
            _write(group / "cgroup.subtree_control", f"+{ctrl}")
    return set(_read(group / "cgroup.subtree_control").split())


def _vacate(group: Path) -> bool:
    """Move every process out of `group` into its supervisor leaf, so that it may enable controllers."""
    leaf = group / SUPERVISOR
    try:
        leaf.mkdir(exist_ok=True)
    except OSError:
        return False
    for _ in range(3):
        pids = _read(group / "cgroup.procs").split()
        if not pids:
            return True
        for pid in pids:
            _write(leaf / "cgroup.procs", pid)
    return not _read(group / "cgroup.procs").split()


def _host(version_base: Path | None, enabled: set[str], reason: str) -> CgroupHost:
    kinds = [k for k in WANTED if k in enabled and k != "cpu"]
    if version_base is not None:
        kinds.append("cpu")  # cpu.stat is kept for every v2 group, with or without the cpu controller
        if (version_base / "cgroup.freeze").exists() or (
            version_base / SUPERVISOR / "cgroup.freeze"
        ).exists():
            kinds.append("freezer")
        if (version_base / "cgroup.kill").exists() or (version_base / SUPERVISOR / "cgroup.kill").exists():
            kinds.append("kill")
    missing = [k for k in ("memory", "pids") if k not in kinds]
    if missing and not reason:
        reason = f"the {'/'.join(missing)} controller is not enabled for {version_base}"
    return CgroupHost("v2", str(version_base) if version_base else None, tuple(kinds), reason)


def prepare(root: Path) -> CgroupHost:
    """Find or make the arena's subtree and enable memory, pids and cpu in it."""
    explicit = os.environ.get("ARENA_CGROUP_BASE")
    own = root / own_cgroup().lstrip("/")
    if explicit:
        base = Path(explicit) if explicit.startswith(str(root)) else root / explicit.lstrip("/")
        if not os.access(base / "cgroup.subtree_control", os.W_OK):
            return _host(None, set(), f"ARENA_CGROUP_BASE={explicit} is not a writable cgroup")
        if base == own and not _vacate(base):
            return _host(None, set(), f"cannot move the arena's processes out of {base}")
        return _host(base, _enable(base), "")
    if own.name == SUPERVISOR:  # a process of an arena that already set its delegated group up
        return _host(own.parent, _enable(own.parent), "")
    if own != root and _delegated(own):
        if not _vacate(own):
            return _host(None, set(), f"cannot move the arena's processes out of its delegated cgroup {own}")
        return _host(own, _enable(own), "")
    if os.geteuid() == 0 and os.access(root / "cgroup.subtree_control", os.W_OK):
        top = _enable(root)
        base = root / PARENT
        try:
            base.mkdir(exist_ok=True)
        except OSError as exc:
            return _host(None, set(), f"cannot create {base}: {exc.strerror}")
        if "cpu" in top:
            _write(base / "cpu.weight", ARENA_CPU_WEIGHT)
        return _host(base, _enable(base), "")
    return _host(
        None,
        set(),
        f"no delegated cgroup for uid {os.getuid()} (own cgroup {own}); run the arena as root, under the "
        "systemd unit deploy/elfern-arena.service (Delegate=yes), or with "
        "`systemd-run --user --scope -p Delegate=yes arena ...`",
    )


class V2Cgroup:
    """One bot's leaf in the arena's subtree."""

    def __init__(self, name: str, path: Path, kinds: set[str]) -> None:
        self.name = name
        self.path = path
        self.kinds = kinds
        self._cpu_stat = KeptFile(path / "cpu.stat")

    @classmethod
    def create(cls, host: CgroupHost, memory: int, pids: int, label: str = "bot") -> V2Cgroup | None:
        if host.base is None:
            return None
        with _seq_lock:
            seq = next(_seq)
        name = f"{owner_tag()}.{seq}-{''.join(c for c in label if c.isalnum())[:20]}"
        path = Path(host.base) / name
        try:
            path.mkdir()
        except OSError:
            return None
        kinds: set[str] = {k for k in ("cpu", "freezer", "kill") if k in host.kinds}
        if "memory" in host.kinds and _write(path / "memory.max", memory):
            kinds.add("memory")
            if (path / "memory.swap.max").exists():
                _write(path / "memory.swap.max", 0)  # no escape into swap
            _write(path / "memory.oom.group", 1)
        if "pids" in host.kinds and _write(path / "pids.max", pids):
            kinds.add("pids")
        _write(path / "cpu.weight", scaled_weight(BOT_CPU_WEIGHT, launcher_nice()))
        return cls(name, path, kinds)

    def procs_files(self) -> list[str]:
        return [str(self.path / "cgroup.procs")]

    def has(self, kind: str) -> bool:
        return kind in self.kinds

    def paths(self) -> list[Path]:
        return [self.path] if self.path.exists() else []

    def pids(self) -> list[int]:
        return [int(x) for x in _read(self.path / "cgroup.procs").split()]

    # --- accounting --------------------------------------------------------------------------
    def cpu_seconds(self) -> float | None:
        for line in self._cpu_stat.read().splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec" and value.strip().isdigit():
                return int(value) / 1e6
        return None

    def oom_kills(self) -> int:
        return _keyed(self.path / "memory.events", "oom_kill") if "memory" in self.kinds else 0

    def memory_failcnt(self) -> int:
        return _keyed(self.path / "memory.events", "max") if "memory" in self.kinds else 0

    def pids_refused(self) -> int:
        return _keyed(self.path / "pids.events", "max") if "pids" in self.kinds else 0

    # --- control ------------------------------------------------------------------------------
    def _frozen(self, state: int) -> bool:
        deadline = time.monotonic() + FREEZE_WAIT
        while _keyed(self.path / "cgroup.events", "frozen") != state:
            if time.monotonic() > deadline or not self.path.exists():
                return False
            time.sleep(0.0005)
        return True

    def freeze(self) -> bool:
        if "freezer" not in self.kinds or not _write(self.path / "cgroup.freeze", 1):
            return False
        self._frozen(1)  # the write only starts it; return once no task runs
        return True

    def thaw(self) -> bool:
        return "freezer" in self.kinds and _write(self.path / "cgroup.freeze", 0)

    def signal_all(self, sig: int) -> None:
        signal_pids(self.pids(), sig)

    def kill_all(self, timeout: float = 5.0) -> bool:
        """`cgroup.kill` (one atomic SIGKILL for the whole leaf); without it, freeze + SIGKILL."""
        deadline = time.monotonic() + timeout
        while True:
            if not (("kill" in self.kinds) and _write(self.path / "cgroup.kill", 1)):
                self.signal_all(signal.SIGKILL)  # frozen v2 tasks still die of SIGKILL
            if not self.pids() and _keyed(self.path / "cgroup.events", "populated") == 0:
                return True
            if time.monotonic() > deadline or not self.path.exists():
                return not self.pids()
            time.sleep(0.002)

    def remove(self) -> None:
        self._cpu_stat.close()
        if not self.path.exists():
            return
        self.kill_all()
        for _ in range(500):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.001)  # exiting tasks are still being reaped


def sweep_stale(host: CgroupHost) -> list[str]:
    """Kill and remove the leaves of referees that no longer run (never the supervisor leaf)."""
    if host.base is None:
        return []
    removed: list[str] = []
    try:
        entries = list(Path(host.base).iterdir())
    except OSError:
        return removed
    for path in entries:
        if (
            not path.is_dir()
            or not sweepable(path.parent, path.name)
            or owner_alive(path.name.split("-", 1)[0])
        ):
            continue
        group = V2Cgroup(path.name, path, set(host.kinds))
        group.remove()
        if path.exists():
            unsweepable.add(path.name)
        else:
            removed.append(f"v2/{path.name}")
    return removed
