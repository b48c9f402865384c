"""Content-addressed copies of submitted bundles: the same files always give the same hash."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

SKIP = {".git", "__pycache__", ".venv", "node_modules", ".mypy_cache", ".pytest_cache"}


def _files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                out.append(path)
    return out


def content_hash(root: str | Path) -> str:
    """SHA-256 over every file's relative path, executable bit and bytes, in sorted order."""
    root = Path(root)
    digest = hashlib.sha256()
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0")
        digest.update(b"x" if os.access(path, os.X_OK) else b"-")
        digest.update(path.stat().st_size.to_bytes(8, "big"))
        with path.open("rb") as fh:
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
    for path in _files(src):
        target = tmp / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    try:
        tmp.rename(dest)
    except OSError:  # another process stored the same content first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest
