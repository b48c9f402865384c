"""What one owner's uploads may hold: upload streams open at once, and disk for bundles and builds.

Every upload is admitted before a byte of its body is read (`UploadGate.admit`): it takes one of
the owner's upload slots (PER_OWNER at once, TOTAL_UPLOADS in all) and reserves room in the owner's
disk quota, which counts the owner's stored bundles, their build outputs (the staged copies the
builds wrote) and the uploads the owner has in flight. The body may write at most that room
(`Admission.room`); once it is in, only the bytes it wrote stay reserved until the build is over
(`Admission.settle`). Its temporary folder goes with the admission, whatever ends it. The admin
token is not held to the quota (the organiser's own uploads, and uploads for an owner).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from sqlalchemy import select

from arena.service.errors import ResourceExhausted
from arena.store import Store
from arena.store import models as m

log = logging.getLogger("arena.service")
MIB = 1024 * 1024
PER_OWNER = 2  # uploads (streams and their builds) one owner may have at once
TOTAL_UPLOADS = 32  # uploads at once in all
DEFAULT_DISK_QUOTA = 512 * MIB  # bytes of bundles and build outputs per owner (`arena serve --disk-quota`)
BUILT = "d-"  # the staged copy a stored bundle builds in: bundle cache / "d-<content hash>" (arena.sandbox.bundle)


def mib(n: int) -> str:
    return f"{n / MIB:g} MiB"


def tree_bytes(root: Path) -> int:
    """Bytes of the files under `root` (links not followed); 0 when it does not exist."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:  # removed meanwhile
                pass
    return total


def disk_use(store: Store, owner: str) -> int:
    """Bytes `owner`'s versions hold on disk: each stored bundle once, with its build's staged copy."""
    from arena.sandbox.bundle import bundle_cache_dir

    with store.read() as s:
        query = (
            select(m.BotVersion.content_hash, m.BotVersion.path)
            .join(m.Bot, m.Bot.id == m.BotVersion.bot_id)
            .where(m.Bot.owner == owner)
        )
        rows = {(digest, path) for digest, path in s.execute(query)}
    cache = bundle_cache_dir()
    return sum(tree_bytes(Path(path)) + tree_bytes(cache / f"{BUILT}{digest}") for digest, path in rows)


@dataclass
class Admission:
    """One admitted upload: its slot, its reserved room and its temporary folder, all given back by
    `close` (the folder removed with whatever is in it)."""

    gate: UploadGate
    owner: str
    room: int  # bytes the body may write
    quota: int | None  # the owner's quota, when it is what limits `room`
    folder: Path = field(default_factory=Path)
    reserved: int = 0  # bytes held in the owner's quota for this upload
    _closed: bool = False

    def refusal(self, cap: int) -> ResourceExhausted:
        """The error for a body over `room`: the upload cap, or the disk quota when it is smaller."""
        if self.quota is not None and self.room < cap:
            return ResourceExhausted(
                f"the upload is over the {mib(self.room)} left of owner {self.owner!r}'s "
                f"{mib(self.quota)} disk quota (bundles and build outputs); ask the organiser to "
                "remove old versions or raise --disk-quota"
            )
        return ResourceExhausted(f"the upload is over the {cap // MIB} MiB cap; make the bundle smaller")

    def settle(self, written: int) -> None:
        """The body is in, `written` bytes: only those stay reserved while the upload builds."""
        if written < self.reserved:
            self.gate.unreserve(self.owner, self.reserved - written)
            self.reserved = written

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        shutil.rmtree(self.folder, ignore_errors=True)
        self.gate.leave(self.owner, self.reserved)

    def __enter__(self) -> Admission:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class UploadGate:
    """Upload slots (per owner and in all) and the bytes reserved by each owner's uploads in flight."""

    def __init__(
        self,
        per_owner: int = PER_OWNER,
        total: int = TOTAL_UPLOADS,
        disk_quota: int = DEFAULT_DISK_QUOTA,
        folder: Path | None = None,
    ) -> None:
        self.per_owner, self.total, self.disk_quota = per_owner, total, disk_quota
        self.folder = folder  # where upload folders are made (None: the system's temporary folder)
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}
        self._reserved: dict[str, int] = {}
        self.refused = 0  # uploads refused here, before their bodies were read

    def admit(self, store: Store, owner: str, cap: int, quota: bool = True) -> Admission:
        """A slot and room for one upload of `owner`, or ResourceExhausted naming the limit; blocking
        (it reads the store and the disk)."""
        with self._lock:
            mine = self._open.get(owner, 0)
            if mine >= self.per_owner or sum(self._open.values()) >= self.total:
                self.refused += 1
                raise ResourceExhausted(
                    f"owner {owner!r} has {mine} upload(s) under way and at most {self.per_owner} may run "
                    "at once"
                    if mine >= self.per_owner
                    else f"the server takes at most {self.total} uploads at once",
                    retry_after=10,
                )
            self._open[owner] = mine + 1
        try:
            room, limit = cap, None
            if quota:
                used = disk_use(store, owner)
                with self._lock:
                    flight = self._reserved.get(owner, 0)
                    left = self.disk_quota - used - flight
                    if left <= 0:
                        raise ResourceExhausted(
                            f"owner {owner!r} holds {mib(used)} of bundles and build outputs and "
                            f"{mib(flight)} in uploads under way: its {mib(self.disk_quota)} disk quota is "
                            "full; ask the organiser to remove old versions or raise --disk-quota"
                        )
                    room = min(cap, left)
                    limit = self.disk_quota
                    self._reserved[owner] = self._reserved.get(owner, 0) + room
            folder = Path(tempfile.mkdtemp(prefix="arena-upload-", dir=self.folder))
        except BaseException:
            with self._lock:
                self.refused += 1
            self.leave(owner, room if quota and limit is not None else 0)
            raise
        return Admission(self, owner, room, limit, folder, reserved=room if limit is not None else 0)

    def leave(self, owner: str, reserved: int) -> None:
        with self._lock:
            left = self._open.get(owner, 0) - 1
            if left > 0:
                self._open[owner] = left
            else:
                self._open.pop(owner, None)
        self.unreserve(owner, reserved)

    def unreserve(self, owner: str, nbytes: int) -> None:
        with self._lock:
            rest = self._reserved.get(owner, 0) - nbytes
            if rest > 0:
                self._reserved[owner] = rest
            else:
                self._reserved.pop(owner, None)

    def open(self, owner: str | None = None) -> int:
        with self._lock:
            return self._open.get(owner, 0) if owner is not None else sum(self._open.values())
