"""Links checked against the real tree: a bundle's symlinks may only ever point inside the bundle.

A lexical check (normalise `dirname(link) + target`) is not enough: with `a -> .` and
`b -> a/..`, the text `a/..` looks harmless but the kernel first follows `a`, and a chain of such
links climbs out of the bundle. `check_tree` therefore resolves every link the way the kernel
would, one component and one link hop at a time, against the files really on disk, and refuses a
link whose path leaves the bundle at any hop. It also refuses what a bundle never needs and a host
reader must never touch: absolute targets, link loops, devices, FIFOs, sockets, and hard links
whose other names lie outside the bundle.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from arena.sandbox.errors import BundleError

#: The kernel's own limit on links followed in one path lookup (MAXSYMLINKS).
MAX_HOPS = 40


def _resolve(root: str, parts: list[str], target: str, hops: list[int]) -> list[str]:
    """The components (relative to `root`) that `target`, read inside the folder `parts`, resolves to.

    Raises ValueError with a short reason when the path leaves the bundle or loops."""
    if target.startswith("/"):
        raise ValueError(f"absolute target {target!r}")
    out = list(parts)
    for comp in target.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if not out:
                raise ValueError("leaves the bundle")
            out.pop()
            continue
        out.append(comp)
        full = os.path.join(root, *out)
        if os.path.islink(full):
            hops[0] += 1
            if hops[0] > MAX_HOPS:
                raise ValueError(f"more than {MAX_HOPS} link hops (a loop)")
            out = _resolve(root, out[:-1], os.readlink(full), hops)
    return out


def link_escapes(root: Path, link_rel: str) -> str | None:
    """Why the link at `root/link_rel` is refused, or None when it resolves inside `root`."""
    real_root = os.path.realpath(root)
    parts = [p for p in link_rel.split("/") if p not in ("", ".")]
    try:
        _resolve(real_root, parts[:-1], os.readlink(os.path.join(real_root, *parts)), [0])
    except ValueError as exc:
        return str(exc)
    return None


def check_tree(root: Path, label: str | Path) -> None:
    """Refuse (BundleError naming the member) anything under `root` a host reader must not follow.

    Walks without following links; `label` is what the user named (archive or folder)."""
    real_root = os.path.realpath(root)
    inodes: dict[tuple[int, int], list[int]] = {}  # (dev, ino) -> [links seen, st_nlink]
    for dirpath, dirnames, filenames in os.walk(real_root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, real_root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                why = link_escapes(Path(real_root), rel)
                if why is not None:
                    raise BundleError(
                        f"{label}: link {rel!r} -> {target!r} points outside the bundle ({why}); "
                        "links must stay inside the bundle"
                    )
            elif stat.S_ISREG(st.st_mode):
                if st.st_nlink > 1:
                    seen = inodes.setdefault((st.st_dev, st.st_ino), [0, st.st_nlink])
                    seen[0] += 1
            elif not stat.S_ISDIR(st.st_mode):
                raise BundleError(
                    f"{label}: member {rel!r} is a device, FIFO or socket; bundles hold files only"
                )
    outside = [key for key, (seen, nlink) in inodes.items() if seen < nlink]
    if outside:
        dev, ino = outside[0]
        rel = _name_of(real_root, dev, ino)
        raise BundleError(
            f"{label}: member {rel!r} is a hard link to a file outside the bundle; use a copy instead"
        )


def _name_of(root: str, dev: int, ino: int) -> str:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in sorted(filenames):
            st = os.lstat(os.path.join(dirpath, name))
            if (st.st_dev, st.st_ino) == (dev, ino):
                return os.path.relpath(os.path.join(dirpath, name), root)
    return "?"


def read_inside(root: Path, rel: str, label: str | Path) -> bytes:
    """The bytes of `root/rel`, refusing a link or any non-regular file (O_NOFOLLOW, no FIFOs)."""
    path = os.path.join(os.path.realpath(root), rel)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise BundleError(f"{label}: {rel} is a link; it must be a plain file in the bundle") from None
        raise BundleError(f"{label}: cannot read {rel}: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BundleError(f"{label}: {rel} is not a plain file")
        return fh.read()
