"""Content-addressed copies of submitted bundles: the same files always give the same hash.

The hash is `arena.bundlehash.tree_hash`, the one the sandbox keys its staged copies by too. Nothing
here follows a link: symlinks are hashed and copied as links (their target text), files are opened
with O_NOFOLLOW. The bundle was checked by `arena.sandbox.bundle.load_bundle` first
(every link resolves inside it), and the stored copy is checked again when it is loaded.

The same files are also kept in the database (`BundleBlob`, one row per hash, packed by `pack`), so a
worker that shares no folder with the server fetches what it plays (`fetch_bundle`) into its own
cache and checks that the unpacked files hash to the name before it uses them.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import tarfile
import uuid
import zlib
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.bundlehash import SKIP, open_entry, tree_entries
from arena.bundlehash import tree_hash as content_hash  # a version's name (BotVersion.content_hash)
from arena.store.models import BundleBlob

if TYPE_CHECKING:
    from arena.store.repo import Store

__all__ = ["SKIP", "BundleUnavailable", "content_hash", "fetch_bundle", "pack", "save_blob", "store_copy"]


def store_copy(src: str | Path, dest_root: str | Path, digest: str) -> Path:
    """Copy a bundle to `dest_root/<digest>` once (atomic rename), returning the stored path."""
    dest = Path(dest_root) / digest
    if dest.is_dir():
        return dest
    tmp = Path(dest_root) / f".tmp-{digest}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    src = Path(src)
    for path, is_link in tree_entries(src):
        target = tmp / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if is_link:
            os.symlink(os.readlink(path), target)
            continue
        with open_entry(path) as fh, open(target, "xb") as out:
            shutil.copyfileobj(fh, out)
            os.chmod(target, os.fstat(fh.fileno()).st_mode & 0o777)
    try:
        tmp.rename(dest)
    except OSError:  # another process stored the same content first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


class BundleUnavailable(RuntimeError):
    """A bundle a job names cannot be had: its blob is missing from the store or does not unpack to
    its content hash. The job fails as an infrastructure error (the match goes back to the queue),
    never as a verdict against a seat; the message starts with REASON."""

    REASON = "BUNDLE_UNAVAILABLE"

    def __init__(self, digest: str, why: str) -> None:
        super().__init__(digest, why)  # the args rebuild it after pickle (pool) or JSON (Celery)
        self.digest, self.why = digest, why

    def __str__(self) -> str:
        return f"{self.REASON}: bundle {self.digest[:12]}: {self.why}"


def pack(root: str | Path) -> bytes:
    """The bundle at `root` as a deterministic gzip'd tar: the entries of `tree_entries` in order,
    mtime 0, owner 0, mode 0644 or 0755 (the executable bit is all the hash keeps), links as links.
    The same files always give the same bytes."""
    root = Path(root)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, is_link in tree_entries(root):
            info = tarfile.TarInfo(path.relative_to(root).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if is_link:
                info.type, info.linkname, info.mode = tarfile.SYMTYPE, os.readlink(path), 0o777
                tar.addfile(info)
                continue
            with open_entry(path) as fh:
                st = os.fstat(fh.fileno())
                info.size, info.mode = st.st_size, 0o755 if st.st_mode & 0o111 else 0o644
                tar.addfile(info, fh)
    return gzip.compress(buf.getvalue(), compresslevel=6, mtime=0)


def save_blob(s: Session, digest: str, root: str | Path) -> bool:
    """Store the bundle at `root` under `digest` unless a blob of that hash is stored already (or
    `root` is no folder: a version registered without files has no blob). True when one was added.
    The caller vouches that `root` hashes to `digest` (submit computed it from those very files)."""
    if not Path(root).is_dir() or s.get(BundleBlob, digest) is not None:
        return False
    data = pack(root)
    try:
        with s.begin_nested():  # a concurrent submit of the same files may store it first
            s.add(BundleBlob(content_hash=digest, size=len(data), data=data))
    except IntegrityError:
        return False
    return True


def fetch_bundle(store: Store, digest: str, cache_root: str | Path, *, max_bytes: int) -> Path:
    """`cache_root/<digest>`, unpacked from the store's blob when it is not there yet: into a
    temporary folder, its tree hash checked against `digest`, then renamed into place, so the cache
    never holds a half-written or foreign bundle. BundleUnavailable when the blob is missing, over
    `max_bytes` unpacked, or does not hash to `digest` (nothing is left behind)."""
    dest = Path(cache_root) / digest
    if dest.is_dir():
        return dest
    with store.read() as s:
        data = s.scalar(select(BundleBlob.data).where(BundleBlob.content_hash == digest))
    if data is None:
        raise BundleUnavailable(digest, "no stored copy in the database; submit the bot again")
    tmp = Path(cache_root) / f".fetch-{digest}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir(parents=True)
    except OSError as exc:
        why = (
            f"cannot write the bundle cache {cache_root} ({exc}); set ARENA_BUNDLE_CACHE to a writable folder"
        )
        raise BundleUnavailable(digest, why) from None
    try:
        _unpack(data, tmp, digest, max_bytes)
        if content_hash(tmp) != digest:
            raise BundleUnavailable(digest, "the stored copy does not hash to its name (damaged)")
        try:
            tmp.rename(dest)
        except OSError:  # another process of this worker fetched it first
            if not dest.is_dir():
                raise
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise BundleUnavailable(digest, f"the stored copy does not unpack ({exc})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _unpack(data: bytes, tmp: Path, digest: str, max_bytes: int) -> None:
    """Write the blob's regular files and links under `tmp`, refusing any other member, any path
    that leaves `tmp` or passes through a link, and more than `max_bytes` of files."""
    links: set[str] = set()
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            parts = PurePosixPath(member.name).parts
            bad = not parts or member.name.startswith("/") or ".." in parts
            if bad or any("/".join(parts[:i]) in links for i in range(1, len(parts))):
                raise BundleUnavailable(digest, f"the stored copy names {member.name!r}, outside the bundle")
            target = tmp.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            if member.issym():
                os.symlink(member.linkname, target)
                links.add(member.name)
                continue
            if not member.isreg():
                raise BundleUnavailable(digest, f"the stored copy holds {member.name!r}, not a file or link")
            total += member.size
            if total > max_bytes:
                raise BundleUnavailable(digest, f"the stored copy is over {max_bytes} bytes unpacked")
            src = tar.extractfile(member)
            assert src is not None  # a regular member always has a file
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            with src, os.fdopen(os.open(target, flags, member.mode & 0o755), "wb") as out:
                shutil.copyfileobj(src, out)
