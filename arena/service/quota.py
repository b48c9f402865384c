"""What one owner's uploads may hold: upload streams open at once, and disk for bundles and builds.

Every upload is admitted before a byte of its body is read (`UploadGate.admit`): it takes one of
the owner's upload slots (PER_OWNER at once, TOTAL_UPLOADS in all) and reserves room in the owner's
disk quota, which counts the owner's stored bundles, their build outputs (the staged copies the
builds wrote) and the uploads the owner has in flight. The body may write at most that room
(`Admission.room`); once it is in, only the bytes it wrote stay reserved until the build is over
(`Admission.settle`). Its temporary folder goes with the admission, whatever ends it. The admin
token is not held to the quota (the organiser's own uploads, and uploads for an owner).

The slots and reservations are `arena.access.shared_state` leases: in this process, or in the Redis
every replica shares (`UploadGate.share`), so an owner has PER_OWNER uploads across all of them.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from sqlalchemy import select

from arena.access.shared_state import Leases, SharedState, leases
from arena.sandbox.building import tree_bytes
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


def _versions(store: Store, owner: str) -> set[tuple[str, str]]:
    """(content hash, stored path) of each of `owner`'s versions, once each."""
    with store.read() as s:
        query = (
            select(m.BotVersion.content_hash, m.BotVersion.path)
            .join(m.Bot, m.Bot.id == m.BotVersion.bot_id)
            .where(m.Bot.owner == owner)
        )
        return {(digest, path) for digest, path in s.execute(query)}


def version_bytes(digest: str, stored: Path) -> int:
    """Bytes one version holds on disk: its stored bundle and its build's staged copy."""
    from arena.sandbox.bundle import bundle_cache_dir

    return tree_bytes(stored) + tree_bytes(bundle_cache_dir() / f"{BUILT}{digest}")


def disk_use(store: Store, owner: str) -> int:
    """Bytes `owner`'s versions hold on disk: each stored bundle once, with its build's staged copy."""
    return sum(version_bytes(digest, Path(path)) for digest, path in _versions(store, owner))


@dataclass
class Admission:
    """One admitted upload: its slot, its reserved room and its temporary folder, all given back by
    `close` (the folder removed with whatever is in it)."""

    gate: UploadGate
    owner: str
    holder: str  # the upload's slot (`Leases`)
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

    def build_room(self, store: Store) -> int | None:
        """Bytes this upload's build may write while it runs (None: no quota, the admin's): the
        owner's quota less its versions and its other uploads under way. The build is stopped past
        it (`arena.sandbox.building.building_within`); `charge_build` then has the last word."""
        if self.quota is None:
            return None
        _room, flight = self.gate.leases.reserve(self.owner, self.holder, self.quota, self.reserved)
        return max(0, self.quota - disk_use(store, self.owner) - flight)

    def charge_build(self, store: Store, digest: str, stored: Path) -> None:
        """Once the upload's build is over, before its version is registered: the owner's versions,
        this one (its stored bundle and its build's output, unless the owner holds the same content
        already) and the room its other uploads under way reserve must fit the quota. Else
        ResourceExhausted naming what the build wrote; the submit then removes both copies. An
        owner builds one bundle at a time (`BuildSlots`), so no other build of its can pass this
        check at once."""
        if self.quota is None:  # the admin's uploads are not held to the quota
            return
        versions = _versions(store, self.owner)
        if any(known == digest for known, _ in versions):
            return  # the same files again: nothing new on disk
        used = sum(version_bytes(known, Path(path)) for known, path in versions)
        new = version_bytes(digest, stored)
        # reserving again what this upload holds answers what its other uploads hold (`flight`)
        _room, flight = self.gate.leases.reserve(self.owner, self.holder, self.quota, self.reserved)
        if used + new + flight > self.quota:
            raise ResourceExhausted(
                f"the build of this version holds {mib(new)} (its bundle and build output); with "
                f"{mib(used)} of owner {self.owner!r}'s versions and {mib(flight)} in its other uploads "
                f"under way that passes its {mib(self.quota)} disk quota, so the version is not "
                "registered and its files are removed; make the build's output smaller, ask the "
                "organiser to remove old versions, or raise --disk-quota"
            )

    def settle(self, written: int) -> None:
        """The body is in, `written` bytes: only those stay reserved while the upload builds."""
        if written < self.reserved:
            self.gate.leases.set_reserved(self.owner, self.holder, written)
            self.reserved = written

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        shutil.rmtree(self.folder, ignore_errors=True)
        self.gate.leave(self.owner, self.holder)

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
        self.leases: Leases = leases(None, "upload")
        self.refused = 0  # uploads refused here, before their bodies were read

    def share(self, state: SharedState) -> None:
        """Count the slots and reservations in `state`'s Redis, with every replica's."""
        self.leases = leases(state, "upload")

    def admit(self, store: Store, owner: str, cap: int, quota: bool = True) -> Admission:
        """A slot and room for one upload of `owner`, or ResourceExhausted naming the limit; blocking
        (it reads the store and the disk)."""
        holder = self.leases.acquire(owner, self.per_owner, self.total)
        if holder is None:
            mine = self.leases.count(owner)
            with self._lock:
                self.refused += 1
            raise ResourceExhausted(
                f"owner {owner!r} has {mine} upload(s) under way and at most {self.per_owner} may run at once"
                if mine >= self.per_owner
                else f"the server takes at most {self.total} uploads at once",
                retry_after=10,
            )
        try:
            room, limit = cap, None
            if quota:
                used = disk_use(store, owner)
                room, flight = self.leases.reserve(owner, holder, self.disk_quota - used, cap)
                if room <= 0:
                    raise ResourceExhausted(
                        f"owner {owner!r} holds {mib(used)} of bundles and build outputs and "
                        f"{mib(flight)} in uploads under way: its {mib(self.disk_quota)} disk quota is "
                        "full; ask the organiser to remove old versions or raise --disk-quota"
                    )
                limit = self.disk_quota
            folder = Path(tempfile.mkdtemp(prefix="arena-upload-", dir=self.folder))
        except BaseException:
            with self._lock:
                self.refused += 1
            self.leave(owner, holder)
            raise
        return Admission(self, owner, holder, room, limit, folder, reserved=room if limit is not None else 0)

    def leave(self, owner: str, holder: str) -> None:
        """Give back the upload's slot and whatever it still reserves."""
        self.leases.release(owner, holder)

    def open(self, owner: str | None = None) -> int:
        return self.leases.count(owner)
