"""Host-wide /proc figures replaced by static files inside the sandbox (a covert channel to close).

Two colluding bots in concurrent matches passed bits through host-wide counters that one of them
can move and the other can read: the thread count in /proc/loadavg, CPU and context-switch
counters in /proc/stat, free memory in /proc/meminfo. bwrap's fresh procfs is per pid namespace,
but these files are not. Each is bind-mounted over, read-only, with content that never changes
while the bot runs: the runtimes still find what they read at start-up (the CPU lines of
/proc/stat give glibc's CPU count, MemTotal is the bot's own memory cap), and nothing in it moves
with the host's load. /sys is not mounted in the sandbox at all (no cgroup or cpufreq figures).
What stays open (sysinfo(2), CPU timing) is listed in docs/sandbox.md.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

#: /proc files whose content is a host-wide figure; each becomes an empty (or static) file.
EMPTY = (
    "vmstat",
    "diskstats",
    "schedstat",
    "interrupts",
    "softirqs",
    "zoneinfo",
    "buddyinfo",
)
#: Host-wide counters under /proc/sys, replaced by fixed values of the same shape.
SYS_FIXED = {
    "sys/fs/file-nr": "0\t0\t1048576\n",
    "sys/fs/inode-nr": "0\t0\n",
    "sys/fs/inode-state": "0\t0\t0\t0\t0\t0\t0\n",
    "sys/fs/dentry-state": "0\t0\t45\t0\t0\t0\n",
    "sys/fs/aio-nr": "0\n",
    "sys/kernel/pty/nr": "0\n",
}
#: Directories of host-wide figures, hidden behind an empty read-only directory.
HIDDEN_DIRS = ("pressure",)


def _write_once(path: Path, text: str) -> None:
    if path.is_file() and path.read_text() == text:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(tmp, 0o444)
    os.replace(tmp, path)


def _stat_text() -> str:
    """/proc/stat with the host's CPU lines (so the CPU count stays right) and every counter zero."""
    cpus = []
    btime = "0"
    with open("/proc/stat") as fh:
        for line in fh:
            if re.match(r"cpu\d+ ", line):
                cpus.append(line.split()[0])
            elif line.startswith("btime "):
                btime = line.split()[1]
    zeros = " ".join(["0"] * 10)
    lines = [f"cpu  {zeros}", *(f"{c} {zeros}" for c in cpus)]
    lines += ["intr 0", "ctxt 0", f"btime {btime}", "processes 0", "procs_running 1", "procs_blocked 0"]
    lines.append("softirq " + " ".join(["0"] * 11))
    return "\n".join(lines) + "\n"


def _meminfo_text(memory: int) -> str:
    """The bot's own memory cap as the machine's memory, all of it free, no swap."""
    host_kb = 0
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                host_kb = int(line.split()[1])
    kb = min(memory // 1024, host_kb) if host_kb else memory // 1024
    fields = [("MemTotal", kb), ("MemFree", kb), ("MemAvailable", kb)]
    fields += [(name, 0) for name in ("Buffers", "Cached", "SwapCached", "Active", "Inactive")]
    fields += [("SwapTotal", 0), ("SwapFree", 0), ("Shmem", 0)]
    return "".join(f"{name + ':':<16}{value:>8} kB\n" for name, value in fields)


def _cpuinfo_text() -> str:
    """The host's /proc/cpuinfo with the clock frequency (which moves with load) fixed."""
    with open("/proc/cpuinfo") as fh:
        text = fh.read()
    return re.sub(r"(?m)^(cpu MHz\s*:\s*).*$", r"\g<1>1000.000", text)


def mask_args(state_dir: Path, memory: int) -> list[str]:
    """bwrap arguments (to follow `--proc /proc`) that cover every host-wide figure we know of."""
    root = state_dir / "proc"
    root.mkdir(mode=0o755, parents=True, exist_ok=True)
    if root.stat().st_uid != os.geteuid():  # e.g. planted in a shared /tmp by another user
        raise PermissionError(f"{root} belongs to another user; remove it or set another state dir")
    os.chmod(root, 0o755)
    empty_dir = root / "empty"
    empty_dir.mkdir(mode=0o555, exist_ok=True)
    files = {
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "uptime": "1000.00 1000.00\n",
        "stat": _stat_text(),
        "meminfo": _meminfo_text(memory),
        "cpuinfo": _cpuinfo_text(),
        **dict.fromkeys(EMPTY, ""),
        **SYS_FIXED,
    }
    args: list[str] = []
    for name, text in files.items():
        if not os.path.exists(f"/proc/{name}"):
            continue  # not on this kernel: nothing to cover
        tag = f"meminfo-{memory}" if name == "meminfo" else name.replace("/", "_")
        path = root / tag
        _write_once(path, text)
        args += ["--ro-bind", str(path), f"/proc/{name}"]
    for name in HIDDEN_DIRS:
        if os.path.isdir(f"/proc/{name}"):
            args += ["--ro-bind", str(empty_dir), f"/proc/{name}"]
    return args
