"""Content-addressed copies of submitted bundles: the same files always give the same hash.

The hash is `arena.bundlehash.tree_hash`, the one the sandbox keys its staged copies by too. Nothing
here follows a link: symlinks are hashed and copied as links (their target text), files are opened
with O_NOFOLLOW. The bundle was checked by `arena.sandbox.bundle.load_bundle` first
(every link resolves inside it), and the stored copy is checked again when it is loaded.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from arena.bundlehash import SKIP, open_entry, tree_entries
from arena.bundlehash import tree_hash as content_hash  # a version's name (BotVersion.content_hash)

__all__ = ["SKIP", "content_hash", "store_copy"]


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
