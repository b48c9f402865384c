"""The cgroup Docker made for a bot's container, read (and frozen) from the host's cgroupfs.

The Docker launcher needs the engine on this host anyway (the bot reaches the referee's Unix socket
through a bind mount), so the container's cgroup is visible here: found from /proc/<init pid>/cgroup
while the container runs, under the cgroup v1 controller mounts or the v2 unified mount. It gives what
`docker inspect` does not: refused forks (`pids.events`), the OOM kills of any process in the container,
the CPU time of the whole tree, and a freezer that costs a file write instead of a `docker pause`.
Every read tolerates a cgroup that is gone (the container ended): it then reports nothing.
"""

from __future__ import annotations

from pathlib import Path

_MOUNTS: dict[str, Path] | None = None


def _mounts() -> dict[str, Path]:
    """controller -> mount point (v1), and "" -> the unified (v2) mount, from /proc/self/mountinfo."""
    global _MOUNTS
    if _MOUNTS is None:
        found: dict[str, Path] = {}
        try:
            lines = Path("/proc/self/mountinfo").read_text().splitlines()
        except OSError:
            lines = []
        for line in lines:
            left, _, right = line.partition(" - ")
            fstype, _, options = (right.split() + ["", "", ""])[:3]
            point = Path(left.split()[4])
            if fstype == "cgroup2":
                found.setdefault("", point)
            elif fstype == "cgroup":
                for opt in options.split(","):
                    if opt in ("memory", "pids", "cpuacct", "freezer"):
                        found.setdefault(opt, point)
        _MOUNTS = found
    return _MOUNTS


class ContainerCgroup:
    """The groups of one container's process tree, per controller (one dir for all on v2)."""

    def __init__(self, dirs: dict[str, Path], unified: bool) -> None:
        self.dirs = dirs
        self.unified = unified

    @classmethod
    def of_pid(cls, pid: int) -> ContainerCgroup | None:
        try:
            text = Path(f"/proc/{pid}/cgroup").read_text()
        except OSError:
            return None
        mounts, dirs, unified_path = _mounts(), {}, None
        for line in text.splitlines():
            _, ctrls, path = line.split(":", 2)
            for ctrl in ctrls.split(","):
                if ctrl in mounts and ctrl:
                    dirs[ctrl] = mounts[ctrl] / path.lstrip("/")
            if ctrls == "":
                unified_path = path
        if {"memory", "pids"} <= set(dirs):
            return cls(dirs, unified=False)
        if unified_path is not None and "" in mounts:
            base = mounts[""] / unified_path.lstrip("/")
            if (base / "memory.events").exists() or (base / "pids.events").exists():
                return cls({c: base for c in ("memory", "pids", "cpuacct", "freezer")}, unified=True)
        return cls(dirs, unified=False) if dirs else None

    def _read(self, ctrl: str, name: str) -> str:
        base = self.dirs.get(ctrl)
        if base is None:
            return ""
        try:
            return (base / name).read_text()
        except OSError:
            return ""

    @staticmethod
    def _field(text: str, key: str) -> int:
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
                return int(parts[1])
        return 0

    def pids_refused(self) -> int:
        """How many forks or threads the pids cap refused (`max` in pids.events)."""
        return self._field(self._read("pids", "pids.events"), "max")

    def oom_kills(self) -> int:
        """Processes of the container the memory cgroup's OOM killer killed."""
        name = "memory.events" if self.unified else "memory.oom_control"
        return self._field(self._read("memory", name), "oom_kill")

    def cpu_seconds(self) -> float | None:
        if self.unified:
            usec = self._field(self._read("cpuacct", "cpu.stat"), "usage_usec")
            return usec / 1e6 if usec else None
        text = self._read("cpuacct", "cpuacct.usage").strip()
        return int(text) / 1e9 if text.isdigit() else None

    def set_frozen(self, frozen: bool) -> bool:
        """Freeze or thaw the whole container; False where the freezer cannot be written."""
        base = self.dirs.get("freezer")
        if base is None:
            return False
        name, value = ("cgroup.freeze", "1" if frozen else "0")
        if not self.unified:
            name, value = ("freezer.state", "FROZEN" if frozen else "THAWED")
        try:
            (base / name).write_text(value)
            return True
        except OSError:
            return False
