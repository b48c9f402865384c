"""Safe unpacking of bundle archives (.tar.gz, .tgz, .zip).

Members are checked one by one as the archive streams, each before it is written, and refused
with a message naming the member: absolute paths, `..` components, names that are not UTF-8 or are
too long or too deep, links that point outside the bundle, hard links, devices and FIFOs. The
member count stops the read at the limit (a tar's headers are read one at a time, never all first;
a zip's end record and directory headers are checked from its tail before zipfile reads them, see
`zipdir.py`);
a failed unpack leaves nothing (the caller unpacks into a temporary folder and removes it). Tar members also pass Python's `data` extraction filter where the interpreter has it
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
import zlib
from pathlib import Path

from arena.sandbox.errors import BundleError
from arena.sandbox.links import check_tree
from arena.sandbox.zipdir import check_directory

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
MAX_DEPTH = 32  # folders deep
MAX_NAME_BYTES = 1024  # a member's whole path, in UTF-8
MAX_PART_BYTES = 255  # one component of it (the file systems' own limit)
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".zip")


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(ARCHIVE_SUFFIXES)


def _shown(name: str) -> str:
    """A member name as messages show it: ASCII-escaped, at most 60 characters."""
    return ascii(name[:60]) + (f"... ({len(name)} characters)" if len(name) > 60 else "")


def _safe_name(archive: Path, name: str) -> str:
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:  # tarfile keeps undecodable bytes as surrogates
        raise BundleError(
            f"{archive}: member {_shown(name)} has a name that is not UTF-8; rename it"
        ) from None
    if len(raw) > MAX_NAME_BYTES or "\0" in name:
        raise BundleError(
            f"{archive}: member {_shown(name)} has a name of {len(raw)} bytes; at most {MAX_NAME_BYTES}"
        )
    clean = name.replace("\\", "/")
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":"):
        raise BundleError(f"{archive}: member {name!r} has an absolute path; archive paths must be relative")
    parts = [p for p in clean.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BundleError(
            f"{archive}: member {_shown(name)} contains '..'; archive paths must stay inside the bundle"
        )
    if len(parts) > MAX_DEPTH:
        raise BundleError(
            f"{archive}: member {_shown(name)} is {len(parts)} folders deep; at most {MAX_DEPTH}"
        )
    for part in parts:
        if len(part.encode()) > MAX_PART_BYTES:
            raise BundleError(
                f"{archive}: member {_shown(name)} has a name part of {len(part.encode())} bytes; "
                f"at most {MAX_PART_BYTES}"
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
        tar = tarfile.open(archive, "r:gz")  # .tar.gz and .tgz are the only tar bundles
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        why = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise BundleError(f"{archive}: not a readable tar archive ({why}); make it with `tar czf`") from None
    with tar:
        count = 0
        while True:  # one header at a time: the count and the checks stop the read at the limit
            m = tar.next()
            if m is None:
                break
            count += 1
            if count > MAX_MEMBERS:
                raise BundleError(f"{archive}: more than {MAX_MEMBERS} members")
            _tar_member(archive, dest, budget, tar, m)
            # tarfile keeps every header it read; we need none of them again (typeshed omits `members`)
            tar.members.clear()  # type: ignore[attr-defined]


def _tar_member(archive: Path, dest: Path, budget: _Budget, tar: tarfile.TarFile, m: tarfile.TarInfo) -> None:
    rel = _safe_name(archive, m.name)
    if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
        raise BundleError(f"{archive}: member {_shown(m.name)} is a device or FIFO; bundles hold files only")
    if m.islnk():
        raise BundleError(
            f"{archive}: member {_shown(m.name)} is a hard link; use a copy or a relative symlink"
        )
    if m.issym():
        _check_link(archive, rel, m.linkname)
    elif not (m.isfile() or m.isdir()):
        raise BundleError(f"{archive}: member {_shown(m.name)} has an unsupported type")
    if not rel:
        return
    if _DATA_FILTER is not None:
        try:  # checked against the tree as extracted so far
            _DATA_FILTER(m, str(dest))
        except tarfile.FilterError as exc:
            raise BundleError(f"{archive}: member {_shown(m.name)} refused: {exc}") from None
    if m.isdir():
        _place(archive, dest, rel).mkdir(exist_ok=True)
    elif m.issym():
        os.symlink(m.linkname, _place(archive, dest, rel))
    else:
        src = tar.extractfile(m)
        assert src is not None
        _write_file(archive, dest, rel, src, bool(m.mode & 0o111), budget)


def _zip_link(archive: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> str:
    """A zip symlink's target (its member's bytes), read to at most MAX_NAME_BYTES and UTF-8."""
    with zf.open(info) as src:
        raw = src.read(MAX_NAME_BYTES + 1)
    try:
        if len(raw) > MAX_NAME_BYTES:
            raise UnicodeError
        return raw.decode("utf-8")
    except UnicodeError:
        raise BundleError(
            f"{archive}: link {_shown(info.filename)} has a target that is too long or not UTF-8"
        ) from None


def _extract_zip(archive: Path, dest: Path, budget: _Budget) -> None:
    check_directory(archive, MAX_MEMBERS, MAX_NAME_BYTES)  # before zipfile reads the whole directory
    try:
        zf = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BundleError(f"{archive}: not a readable zip archive: {exc}") from None
    except (EOFError, ValueError, NotImplementedError) as exc:
        raise BundleError(f"{archive}: not a readable zip archive: {type(exc).__name__}: {exc}") from None
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
                    f"{archive}: member {_shown(info.filename)} is a device or FIFO; bundles hold files only"
                )
            if kind == stat.S_IFLNK:
                _check_link(archive, rel, _zip_link(archive, zf, info))
            plan.append((rel, info, kind, mode))
        for rel, info, kind, mode in plan:
            if not rel:
                continue
            if info.is_dir():
                _place(archive, dest, rel).mkdir(exist_ok=True)
            elif kind == stat.S_IFLNK:
                os.symlink(_zip_link(archive, zf, info), _place(archive, dest, rel))
            else:
                with zf.open(info) as src:
                    _write_file(archive, dest, rel, src, bool(mode & 0o111), budget)


def extract_archive(archive: Path, dest: Path, max_bytes: int = MAX_BUNDLE_BYTES) -> None:
    """Unpack `archive` into the new directory `dest`, refusing unsafe members; a corrupt or
    truncated archive is a BundleError too (never EOFError, which click would print as `Aborted!`)."""
    dest.mkdir(parents=True)
    budget = _Budget(archive, max_bytes)
    try:
        if archive.name.lower().endswith(".zip"):
            _extract_zip(archive, dest, budget)
        else:
            _extract_tar(archive, dest, budget)
    except BundleError:
        raise
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError) as exc:
        raise BundleError(f"{archive}: corrupt or truncated archive ({type(exc).__name__}: {exc})") from None
    except RuntimeError as exc:  # zipfile: an encrypted member
        raise BundleError(f"{archive}: cannot unpack ({exc}); bundles must not be encrypted") from None
    except OSError as exc:
        raise BundleError(f"{archive}: cannot unpack ({exc.strerror or exc})") from None
    # The members were checked one by one; now every link is resolved, hop by hop, on the real tree.
    check_tree(dest, archive)
