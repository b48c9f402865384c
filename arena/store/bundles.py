"""Content-addressed copies of submitted bundles: the same files always give the same hash.

Nothing here follows a link: symlinks are hashed and copied as links (their target text), files
are opened with O_NOFOLLOW. The bundle was checked by `arena.sandbox.bundle.load_bundle` first
(every link resolves inside it), and the stored copy is checked again when it is loaded.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

SKIP = {".git", "__pycache__", ".venv", "node_modules", ".mypy_cache", ".pytest_cache"}


def _entries(root: Path) -> list[tuple[Path, bool]]:
    """(path, is_link) for every regular file and symlink under `root`, sorted, links not followed."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP and d not in links)
        for name in sorted(filenames + links):
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode) or stat.S_ISREG(mode):
                out.append((path, stat.S_ISLNK(mode)))
    return sorted(out)


def _open(path: Path):
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb")


def content_hash(root: str | Path) -> str:
    """SHA-256 over every file's relative path, executable bit and bytes (links: their target), sorted."""
    root = Path(root)
    digest = hashlib.sha256()
    for path, is_link in _entries(root):
        rel = path.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0")
        if is_link:
            target = os.readlink(path).encode()
            digest.update(b"l" + len(target).to_bytes(8, "big") + target)
            continue
        with _open(path) as fh:
            st = os.fstat(fh.fileno())
            digest.update(b"x" if st.st_mode & 0o111 else b"-")
            digest.update(st.st_size.to_bytes(8, "big"))
            for chunk in iter(lambda: fh.read(1 << 16), b""):
                digest.update(chunk)
    return digest.hexdigest()


def store_copy(src: str | Path, dest_root: str | Path, digest: str) -> Path:
    """Copy a bundle to `dest_root/<digest>` once (atomic rename), returning the stored path."""
    dest = Path(dest_root) / digest
    if dest.is_dir():
        return dest
    tmp = Path(dest_root) / f".tmp-{digest}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    src = Path(src)
    for path, is_link in _entries(src):
        target = tmp / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if is_link:
            os.symlink(os.readlink(path), target)
            continue
        with _open(path) as fh, open(target, "xb") as out:
            shutil.copyfileobj(fh, out)
            os.chmod(target, os.fstat(fh.fileno()).st_mode & 0o777)
    try:
        tmp.rename(dest)
    except OSError:  # another process stored the same content first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
