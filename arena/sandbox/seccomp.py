"""The bot seccomp filter: built once per process by a helper under the system interpreter, then
handed to each bwrap launch on a fresh file descriptor (bwrap reads the fd to EOF, so it cannot be
shared between launches; docs/sandbox-notes.md pitfall 7)."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

HELPER = Path(__file__).with_name("seccomp_helper.py")
#: Interpreters that may carry libseccomp's Python binding (Debian's python3-seccomp).
SYSTEM_PYTHONS = ("/usr/bin/python3",)


@functools.lru_cache(maxsize=1)
def filter_bpf() -> bytes | None:
    """The compiled BPF program, or None when libseccomp's binding is not installed."""
    for python in SYSTEM_PYTHONS:
        if not os.access(python, os.X_OK):
            continue
        try:
            res = subprocess.run([python, "-I", str(HELPER)], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if res.returncode == 0 and res.stdout:
            return res.stdout
    return None


def filter_fd() -> int | None:
    """A new readable fd positioned at the start of the filter; the caller closes it."""
    bpf = filter_bpf()
    if bpf is None:
        return None
    fd = os.memfd_create("arena-seccomp", os.MFD_CLOEXEC)
    os.write(fd, bpf)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
