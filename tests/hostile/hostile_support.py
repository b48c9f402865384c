"""Helpers for the hostile suite: copying hostile bundles and hashing what they must not change."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

BOTS = Path(__file__).parent / "bots"


def tree_hash(path: Path) -> str:
    """Names, modes and bytes of everything under `path` (or of the file itself)."""
    digest = hashlib.sha256()
    paths = [path] if path.is_file() else sorted(p for p in path.rglob("*") if "__pycache__" not in p.parts)
    for p in paths:
        st = p.lstat()
        digest.update(f"{p.relative_to(path.parent)}|{st.st_mode}|{st.st_size}".encode())
        if p.is_file() and not p.is_symlink():
            digest.update(p.read_bytes())
    return digest.hexdigest()


def copy_bot(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(BOTS / name, target)
    os.chmod(dest, 0o755)
    return target
