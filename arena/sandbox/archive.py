"""Safe unpacking of bundle archives (.tar.gz, .tgz, .zip).

Members are checked before anything is written and refused with a message naming the member:
absolute paths, `..` components, links that point outside the bundle, hard links, devices and
FIFOs. Tar members also pass Python's `data` extraction filter where the interpreter has it
(3.11.4+); and once everything is written, every link is resolved hop by hop against the real
extracted tree (`links.check_tree`), which is what catches chains such as `a -> .`, `b -> a/..`.
Sizes are counted while writing, so a compression bomb stops at the cap. Owners and modes are not
taken from the archive: files become 0644 (0755 when any exec bit was set).
"""

from __future__ import annotations

import os
import posixpath
import stat
import tarfile
import zipfile
from pathlib import Path

from arena.sandbox.errors import BundleError
from arena.sandbox.links import check_tree

__all__ = [
    "ARCHIVE_SUFFIXES",
    "MAX_BUNDLE_BYTES",
    "MAX_MEMBERS",
    "BundleError",
    "extract_archive",
    "is_archive",
]
#: Python's own tar extraction filter (3.11.4+, 3.12+); older interpreters get the equivalent checks below.
_DATA_FILTER = getattr(tarfile, "data_filter", None)

MAX_BUNDLE_BYTES = 64 * 1024 * 1024
MAX_MEMBERS = 5000
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


def _safe_name(archive: Path, name: str) -> str:
    clean = name.replace("\\", "/")
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":"):
        raise BundleError(f"{archive}: member {name!r} has an absolute path; archive paths must be relative")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleError(
            f"{archive}: member {name!r} contains '..'; archive paths must stay inside the bundle"
        )
    return "/".join(parts)


def _check_link(archive: Path, name: str, target: str) -> None:
    if target.startswith("/"):
        raise BundleError(
            f"{archive}: link {name!r} -> {target!r} points outside the bundle (absolute target)"
        )
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(name), target))
    if resolved == ".." or resolved.startswith("../"):
        raise BundleError(f"{archive}: link {name!r} -> {target!r} points outside the bundle")


class _Budget:
    def __init__(self, archive: Path, max_bytes: int) -> None:
        self.archive = archive
        self.left = max_bytes
        self.max_bytes = max_bytes

    def take(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise BundleError(
                f"{self.archive}: unpacks to more than {self.max_bytes // (1024 * 1024)} MiB; bundles must stay small"
            )


def _place(archive: Path, dest: Path, rel: str) -> Path:
    """The path for a new member; refuses to write through a link or over an earlier member."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        if (dest / "/".join(parts[:i])).is_symlink():
            raise BundleError(
                f"{archive}: member {rel!r} lies under a symlink; links may not be used as folders"
            )
    out = dest / rel
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise BundleError(f"{archive}: member {rel!r} appears twice")
    out.parent.mkdir(parents=True, exist_ok=True)
    return out


def _write_file(archive: Path, dest: Path, rel: str, src, executable: bool, budget: _Budget) -> None:
    out = _place(archive, dest, rel)
    with open(out, "xb") as fh:
        while chunk := src.read(1 << 16):
            budget.take(len(chunk))
            fh.write(chunk)
    os.chmod(out, 0o755 if executable else 0o644)


def _extract_tar(archive: Path, dest: Path, budget: _Budget) -> None:
    try:
        tar = tarfile.open(archive, "r:*")
    except (tarfile.TarError, OSError) as exc:
        raise BundleError(f"{archive}: not a readable tar archive: {exc}") from None
    with tar:
        members = tar.getmembers()
        if len(members) > MAX_MEMBERS:
            raise BundleError(f"{archive}: more than {MAX_MEMBERS} members")
        plan = []
        for m in members:
            rel = _safe_name(archive, m.name)
            if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
                raise BundleError(
                    f"{archive}: member {m.name!r} is a device or FIFO; bundles hold files only"
                )
            if m.islnk():
                raise BundleError(
                    f"{archive}: member {m.name!r} is a hard link; use a copy or a relative symlink"
                )
            if m.issym():
                _check_link(archive, rel, m.linkname)
            elif not (m.isfile() or m.isdir()):
                raise BundleError(f"{archive}: member {m.name!r} has an unsupported type")
            plan.append((rel, m))
        for rel, m in plan:
            if not rel:
                continue
            if _DATA_FILTER is not None:
                try:  # checked against the tree as extracted so far
                    _DATA_FILTER(m, str(dest))
                except tarfile.FilterError as exc:
                    raise BundleError(f"{archive}: member {m.name!r} refused: {exc}") from None
            if m.isdir():
                _place(archive, dest, rel).mkdir(exist_ok=True)
            elif m.issym():
                os.symlink(m.linkname, _place(archive, dest, rel))
            else:
                src = tar.extractfile(m)
                assert src is not None
                _write_file(archive, dest, rel, src, bool(m.mode & 0o111), budget)


def _extract_zip(archive: Path, dest: Path, budget: _Budget) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{archive}: not a readable zip archive: {exc}") from None
    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            raise BundleError(f"{archive}: more than {MAX_MEMBERS} members")
        plan = []
        for info in infos:
            rel = _safe_name(archive, info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode) if mode else 0
            if kind in (stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO, stat.S_IFSOCK):
                raise BundleError(
                    f"{archive}: member {info.filename!r} is a device or FIFO; bundles hold files only"
                )
            if kind == stat.S_IFLNK:
                _check_link(archive, rel, zf.read(info).decode("utf-8", "replace"))
            plan.append((rel, info, kind, mode))
        for rel, info, kind, mode in plan:
            if not rel:
                continue
            if info.is_dir():
                _place(archive, dest, rel).mkdir(exist_ok=True)
            elif kind == stat.S_IFLNK:
                os.symlink(zf.read(info).decode(), _place(archive, dest, rel))
            else:
                with zf.open(info) as src:
                    _write_file(archive, dest, rel, src, bool(mode & 0o111), budget)


def extract_archive(archive: Path, dest: Path, max_bytes: int = MAX_BUNDLE_BYTES) -> None:
    """Unpack `archive` into the new directory `dest`, refusing unsafe members."""
    dest.mkdir(parents=True)
    budget = _Budget(archive, max_bytes)
    if archive.name.lower().endswith(".zip"):
        _extract_zip(archive, dest, budget)
    else:
        _extract_tar(archive, dest, budget)
    # The members were checked one by one; now every link is resolved, hop by hop, on the real tree.
    check_tree(dest, archive)
