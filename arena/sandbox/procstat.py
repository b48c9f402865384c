"""CPU time of a process from /proc, for launchers without (or before) a cpuacct cgroup."""

from __future__ import annotations

import os


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of `pid` plus those of its waited-for children, in seconds; None if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None
