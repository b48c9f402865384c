"""A pool of unprivileged uids, one per running bot (docs/sandbox-notes.md pitfall 4: RLIMIT_NPROC and
signal permissions are per uid, so two bots sharing a uid could see or signal each other).

A uid is held by an flock on `<lock dir>/<uid>.lock`, so several referee processes on one machine
never hand out the same uid, and a uid returns to the pool by itself when its holder dies.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

FIRST_UID = int(os.environ.get("ARENA_SANDBOX_UID_BASE", "20001"))
POOL_SIZE = 1000


class UidPoolExhausted(RuntimeError):
    pass


class UidLease:
    """A uid held until `release()`; the lock fd is the lease."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def acquire(lock_dir: Path, first: int = FIRST_UID, size: int = POOL_SIZE) -> UidLease:
    """Lease the first free uid in [first, first + size)."""
    lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    for uid in range(first, first + size):
        fd = os.open(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise UidPoolExhausted(f"all {size} sandbox uids from {first} are in use")
