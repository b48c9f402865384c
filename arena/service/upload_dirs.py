"""The folder a server's uploads arrive in, which the next server start sweeps once its owner is dead.

Each `arena serve` process claims a folder of its own, `arena-serve-XXXXXXXX` under the system's
temporary folder (TMPDIR), and holds an exclusive `flock` on the `lock` file inside it for as long
as it lives. Every upload's temporary folder (`arena-upload-*`, `arena.service.quota`) is made in
it. The kernel drops the lock when the process ends, SIGKILL included, so at start a server sweeps
every `arena-serve-*` folder whose lock it can take: that owner is gone, and what it held is the
incomplete upload it was receiving. A folder whose lock is held belongs to a live server (two
replicas may share one TMPDIR) and is never touched.

A folder is made under a hidden name (`.arena-serve-*`), locked, then renamed into place, so a sweep
never sees an unlocked folder of a server that is still starting; a hidden one is swept only once
it is an hour old (its server died between the two steps). A server that stops cleanly removes its
own folder.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import IO

log = logging.getLogger("arena.service")
PREFIX = "arena-serve-"
LOCK = "lock"
STARTING = 3600.0  # seconds after which a hidden folder's server is taken to have died starting


def _dead(folder: Path) -> IO[bytes] | None:
    """The lock of `folder`, taken (its owner is dead), or None when a live process holds it."""
    try:
        handle = open(folder / LOCK, "rb")  # held until the folder is gone
    except OSError:  # being swept by another server this moment, another user's, or not a server's
        return None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def sweep(base: Path) -> list[Path]:
    """Remove the upload folders of servers that are gone from `base`; the folders removed."""
    removed: list[Path] = []
    try:
        entries = list(base.iterdir())
    except OSError:
        return removed
    now = time.time()
    for folder in entries:
        if folder.name.startswith(PREFIX) and folder.is_dir() and not folder.is_symlink():
            held = _dead(folder)
            if held is None:  # a live server's
                continue
            with held:
                shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
        elif folder.name.startswith("." + PREFIX) and folder.is_dir() and not folder.is_symlink():
            try:
                old = now - folder.stat().st_mtime > STARTING
            except OSError:
                continue
            if old:
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
    return removed


class UploadRoot:
    """This server's upload folder, locked while the process lives (`claim`); `release` removes it."""

    def __init__(self, folder: Path, lock: IO[bytes]) -> None:
        self.folder, self._lock = folder, lock

    @classmethod
    def claim(cls, base: Path | None = None) -> UploadRoot:
        """Sweep what dead servers left in `base` (the system's temporary folder by default), then
        make and lock this server's own folder there."""
        base = Path(base or tempfile.gettempdir())
        gone = sweep(base)
        if gone:
            log.info(
                "removed %d upload folder(s) a stopped server left in %s: %s",
                len(gone),
                base,
                ", ".join(g.name for g in gone),
            )
        hidden = Path(tempfile.mkdtemp(prefix="." + PREFIX, dir=base))
        lock = open(hidden / LOCK, "wb")  # held for the process's life
        fcntl.flock(lock, fcntl.LOCK_EX)
        folder = base / hidden.name[1:]
        os.rename(hidden, folder)
        return cls(folder, lock)

    def release(self) -> None:
        """The server stops: its folder goes, with any upload still in it."""
        shutil.rmtree(self.folder, ignore_errors=True)
        self._lock.close()
