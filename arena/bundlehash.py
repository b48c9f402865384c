"""The one content hash of a bot's files, and the walk that says which files those are.

Two layers need it and may not import each other: the store names a submitted version by it
(`BotVersion.content_hash`, the folder of its stored copy, `arena.proto` `BotVersion.content_hash`),
and the sandbox keys the staged copy of a bundle with a build step by it. So it lives at the bottom.
The bytes hashed are the store's since the first release; changing them would orphan every stored
copy and make a re-submission of unchanged files a new version. (The sandbox used a hash of its own
before, `d-` and 24 hex digits in the bundle cache: those staged copies are no longer read, a bundle
with a build step is built once more when it is first loaded, and the old folders may be deleted.)

Nothing here follows a link: a symlink is hashed as its target text, files are opened with O_NOFOLLOW.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Collection
from pathlib import Path
from typing import BinaryIO

#: folders a submission leaves out (tools' caches and checkouts, not the bot)
SKIP = frozenset({".git", "__pycache__", ".venv", "node_modules", ".mypy_cache", ".pytest_cache"})
MIB = 1024 * 1024


class TreeTooLarge(ValueError):
    """The tree is over a cap; the message names the folder, the cap and the fix."""


def tree_entries(
    root: str | Path, skip: Collection[str] = SKIP, max_members: int | None = None
) -> list[tuple[Path, bool]]:
    """(path, is_link) for every regular file and symlink under `root`, sorted, links not followed,
    the `skip` folders left out. More than `max_members` entries is TreeTooLarge, said as soon as seen."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        dirnames[:] = sorted(d for d in dirnames if d not in skip and d not in links)
        for name in sorted(filenames + links):
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode) or stat.S_ISREG(mode):
                out.append((path, stat.S_ISLNK(mode)))
                if max_members is not None and len(out) > max_members:
                    raise TreeTooLarge(f"{root}: more than {max_members} files; bundles must stay small")
    return sorted(out)


def open_entry(path: Path) -> BinaryIO:
    """A tree entry's bytes, never through a link."""
    return os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC), "rb")


def tree_hash(
    root: str | Path,
    skip: Collection[str] = SKIP,
    *,
    max_bytes: int | None = None,
    max_members: int | None = None,
) -> str:
    """SHA-256 (hex) over every entry's relative path, executable bit, size and bytes (a link: its
    target), in sorted order. The caps (total file bytes, entries) raise TreeTooLarge."""
    root = Path(root)
    digest = hashlib.sha256()
    total = 0
    for path, is_link in tree_entries(root, skip, max_members):
        rel = path.relative_to(root).as_posix()
        digest.update(rel.encode() + b"\0")
        if is_link:
            target = os.readlink(path).encode()
            digest.update(b"l" + len(target).to_bytes(8, "big") + target)
            continue
        with open_entry(path) as fh:
            st = os.fstat(fh.fileno())
            total += st.st_size
            if max_bytes is not None and total > max_bytes:
                raise TreeTooLarge(
                    f"{root}: larger than {max_bytes // MIB} MiB; remove build outputs or data"
                )
            digest.update(b"x" if st.st_mode & 0o111 else b"-")
            digest.update(st.st_size.to_bytes(8, "big"))
            for chunk in iter(lambda: fh.read(1 << 16), b""):
                digest.update(chunk)
    return digest.hexdigest()
