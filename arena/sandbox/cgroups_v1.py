"""cgroup v1 (and hybrid) backend: one group per controller per bot, under `<controller>/elfern-arena/`.

The development machines expose v1 controllers under /sys/fs/cgroup/<controller> (docs/sandbox-notes.md,
"The host"), and in hybrid mode an empty cgroup2 at /sys/fs/cgroup/unified that carries no controller.
Where a controller is missing or read-only the group simply lacks it and the launcher falls back to
rlimits and signals. The interface is `arena.sandbox.cgroups.BotCgroup`.
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
    is_group_name,
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

CONTROLLERS = ("memory", "pids", "cpuacct", "freezer", "cpu")
#: Which controller gives each kind of `BotCgroup.has()` (v1 has no cgroup.kill: freeze + SIGKILL).
KIND_CONTROLLER = {
    "memory": "memory",
    "pids": "pids",
    "cpu": "cpuacct",
    "freezer": "freezer",
    "kill": "freezer",
}
#: cpu.shares of the `elfern-arena` parent in the cpu controller (the kernel default is 1024 per
#: group or root-level task): the bot on move gets the CPU ahead of other work on the machine, so
#: that wall-clock move times stay close to the CPU a bot really used (docs/sandbox.md).
ARENA_CPU_SHARES = int(os.environ.get("ARENA_CPU_SHARES", "8192"))
#: The cpu controller's parent of a niced launcher's bots: `elfern-arena-nice<N>` (cpu_parent()).
NICED_PARENT = f"{PARENT}-nice"

_seq = itertools.count(1)
_seq_lock = threading.Lock()


def cpu_parent() -> tuple[str, int]:
    """The cpu controller's parent of this process's bots, and that parent's cpu.shares.

    A bot's group is a group of its own to the scheduler, where the niceness the bot inherited
    weighs nothing against tasks outside it. So the bots of a niced launcher (the players of
    `arena serve`, `--players-nice`: batch work that yields the cores to the server's calls) go under
    `elfern-arena-nice<N>`, whose cpu.shares are ARENA_CPU_SHARES scaled as niceness N scales a
    task's weight (880 at 10, below the 1024 of the server's own session): they yield to the server
    as the players' own processes do, and stay about level with other programs. Any other
    launcher's bots go under `elfern-arena`, ahead of other work (ARENA_CPU_SHARES, fair clocks)."""
    nice = launcher_nice()
    if nice == 0:
        return PARENT, ARENA_CPU_SHARES
    return f"{NICED_PARENT}{nice}", max(2, scaled_weight(ARENA_CPU_SHARES, nice))  # the kernel's least is 2


def _parent(ctrl: str) -> str:
    return cpu_parent()[0] if ctrl == "cpu" else PARENT


def _parents(ctrl: str) -> list[Path]:
    """Every parent of bots' groups in `ctrl`: `elfern-arena`, and for cpu the niced launchers' too."""
    base = _root() / ctrl
    found = [base / PARENT]
    if ctrl == "cpu":
        try:
            with os.scandir(base) as it:
                found += sorted(base / e.name for e in it if e.name.startswith(NICED_PARENT) and e.is_dir())
        except OSError:
            pass
    return found


def _root() -> Path:
    from arena.sandbox import cgroups

    return cgroups.ROOT


def available_controllers() -> tuple[str, ...]:
    """Controllers whose `elfern-arena` parent group exists or can be created here."""
    found = []
    for ctrl in CONTROLLERS:
        base = _root() / ctrl
        if not (base / "cgroup.procs").exists():
            continue
        parent = base / _parent(ctrl)
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            continue
        if os.access(parent, os.W_OK):
            found.append(ctrl)
            if ctrl == "cpu":
                _write(parent / "cpu.shares", cpu_parent()[1])
    return tuple(found)


#: available_controllers() per cgroup root, found once per process rather than at every launch
#: (five mkdirs and a write each time, a quarter of what creating a bot's groups cost).
_known: dict[Path, tuple[str, ...]] = {}


def _controllers() -> tuple[str, ...]:
    root = _root()
    found = _known.get(root)
    if found is None:
        found = _known[root] = available_controllers()
    return found


def prepare(root: Path, version: str) -> CgroupHost:
    """The v1 controllers writable here, as kinds."""
    ctrls = available_controllers()
    kinds = tuple(k for k, c in KIND_CONTROLLER.items() if c in ctrls)
    missing = [k for k in ("memory", "pids") if k not in kinds]
    reason = ""
    if missing:
        reason = (
            f"the v1 {'/'.join(missing)} controller under {root} is not writable by uid {os.getuid()}; "
            "run the arena as root"
        )
    return CgroupHost(version, f"{root}/<controller>/{PARENT}", kinds, reason)


class V1Cgroup:
    """One bot's groups across the available v1 controllers."""

    def __init__(self, name: str, dirs: dict[str, Path]) -> None:
        self.name = name
        self.dirs = dirs
        self._usage = KeptFile(dirs["cpuacct"] / "cpuacct.usage") if "cpuacct" in dirs else None

    @classmethod
    def create(cls, memory: int, pids: int, label: str = "bot") -> V1Cgroup | None:
        """Make the groups and set the caps; None when no controller is writable."""
        ctrls = _controllers()
        if not ctrls:
            return None
        with _seq_lock:
            seq = next(_seq)
        name = f"{owner_tag()}.{seq}-{''.join(c for c in label if c.isalnum())[:20]}"
        dirs: dict[str, Path] = {}
        for ctrl in ctrls:
            path = _root() / ctrl / _parent(ctrl) / name
            try:
                path.mkdir()
            except FileNotFoundError:  # its parent was removed since: make the parents again
                _known.pop(_root(), None)
                if ctrl not in _controllers():
                    continue
                try:
                    path.mkdir()
                except OSError:
                    continue
            except OSError:
                continue
            dirs[ctrl] = path
        group = cls(name, dirs)
        if "memory" in dirs:
            mem = dirs["memory"]
            ok = _write(mem / "memory.limit_in_bytes", memory)
            _write(
                mem / "memory.memsw.limit_in_bytes", memory
            )  # no swap escape, where swap accounting exists
            if not ok:
                group._drop("memory")
        if "pids" in dirs and not _write(dirs["pids"] / "pids.max", pids):
            group._drop("pids")
        return group if group.dirs else None

    def _drop(self, ctrl: str) -> None:
        path = self.dirs.pop(ctrl)
        try:
            path.rmdir()
        except OSError:
            pass

    def procs_files(self) -> list[str]:
        """The `cgroup.procs` files a wrapper writes its pid into before exec'ing the sandbox."""
        return [str(p / "cgroup.procs") for p in self.dirs.values()]

    def has(self, kind: str) -> bool:
        return KIND_CONTROLLER.get(kind, kind) in self.dirs

    def paths(self) -> list[Path]:
        return list(self.dirs.values())

    def pids(self) -> list[int]:
        for path in self.dirs.values():
            text = _read(path / "cgroup.procs")
            return [int(x) for x in text.split()]
        return []

    # --- accounting --------------------------------------------------------------------------
    def cpu_seconds(self) -> float | None:
        if self._usage is None:
            return None
        text = self._usage.read().strip()
        return int(text) / 1e9 if text.isdigit() else None

    def oom_kills(self) -> int:
        if "memory" not in self.dirs:
            return 0
        for line in _read(self.dirs["memory"] / "memory.oom_control").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def memory_failcnt(self) -> int:
        if "memory" not in self.dirs:
            return 0
        text = _read(self.dirs["memory"] / "memory.failcnt").strip()
        return int(text) if text.isdigit() else 0

    def pids_refused(self) -> int:
        """How many forks/clones the pids cap refused (`pids.events` max)."""
        if "pids" not in self.dirs:
            return 0
        for line in _read(self.dirs["pids"] / "pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max" and value.strip().isdigit():
                return int(value)
        return 0

    # --- control ------------------------------------------------------------------------------
    def freeze(self) -> bool:
        return "freezer" in self.dirs and _write(self.dirs["freezer"] / "freezer.state", "FROZEN")

    def thaw(self) -> bool:
        return "freezer" in self.dirs and _write(self.dirs["freezer"] / "freezer.state", "THAWED")

    def signal_all(self, sig: int) -> None:
        signal_pids(self.pids(), sig)

    def kill_all(self, timeout: float = 5.0) -> bool:
        """SIGKILL every task, freezing first so that nothing forks in between; True when empty."""
        deadline = time.monotonic() + timeout
        while True:
            frozen = self.freeze()
            self.signal_all(signal.SIGKILL)
            if frozen:
                self.thaw()  # SIGKILL is delivered once the tasks run again
            if not self.pids():
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)

    def remove(self) -> None:
        """Kill what is left and delete the groups (idempotent)."""
        self.kill_all()
        if self._usage is not None:
            self._usage.close()
        for ctrl in list(self.dirs):
            path = self.dirs[ctrl]
            for _ in range(500):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.001)  # exiting tasks are still being reaped
            self.dirs.pop(ctrl)


def sweep_stale() -> list[str]:
    """Kill and remove groups left behind by referees that no longer run; return their names.
    Before every launch, so it is cheap when there is nothing to sweep: names are judged before
    anything is stat'ed (a parent holds a dozen control files), this process's own groups by their
    prefix, and each other owner is looked up once."""
    removed: list[str] = []
    mine = owner_tag() + "."
    alive: dict[str, bool] = {}
    for ctrl, parent in ((c, p) for c in CONTROLLERS for p in _parents(c)):
        try:
            with os.scandir(parent) as it:
                names = [
                    e.name for e in it if not e.name.startswith(mine) and is_group_name(e.name) and e.is_dir()
                ]
        except OSError:
            continue
        for name in names:
            owner = name.split("-", 1)[0]
            if owner not in alive:
                alive[owner] = owner_alive(owner)
            if alive[owner] or not sweepable(parent, name):
                continue
            path = parent / name
            group = V1Cgroup(name, {ctrl: path})
            if ctrl != "freezer":
                freezer = _root() / "freezer" / PARENT / name
                if freezer.is_dir():
                    group.dirs["freezer"] = freezer
            if not group.kill_all():
                unsweepable.add(name)
                continue
            try:
                path.rmdir()
                removed.append(f"{ctrl}/{name}")
            except OSError:
                pass  # its last tasks are still being reaped: the next sweep removes it
    return removed
