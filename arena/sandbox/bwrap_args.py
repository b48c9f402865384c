"""bwrap's argument list, the parts that do not change from one launch to the next made once.

Split from `bwrap.py`: the namespaces, capabilities and the runtime's read-only binds depend only on
the runtime and a few limits, the tail (/etc, /proc with its host-wide figures covered, /dev) only
on the memory cap; both are built once per process and key (0.6 ms of CPU per launch before:
`arena bench sandbox`). What differs per launch (the bundle, the seat's socket, the fds, the uid)
is added by `BwrapLauncher._command`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from arena.sandbox import procmask
from arena.sandbox.launcher import SANDBOX_BUNDLE

_lock = threading.Lock()
_heads: dict[tuple[object, ...], tuple[str, ...]] = {}
_tails: dict[tuple[Path, int], tuple[tuple[int, int], tuple[str, ...]]] = {}


def _ancestors(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if str(p) != "/"]


def _build_head(privileged: bool, binds: tuple[tuple[Path, str], ...], tmp_size: int) -> tuple[str, ...]:
    cmd: list[str] = []
    if privileged:
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    else:
        cmd += ["--unshare-all", "--unshare-user", "--disable-userns"]
    cmd += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if privileged:  # only the uid switch uses these, to become the bot's uid; it then drops all
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    cmd += ["--hostname", "arena-bot", "--ro-bind", "/usr", "/usr"]
    for name in ("lib", "lib64", "bin", "sbin"):
        if os.path.islink(f"/{name}"):
            cmd += ["--symlink", f"usr/{name}", f"/{name}"]
        elif os.path.isdir(f"/{name}"):
            cmd += ["--ro-bind", f"/{name}", f"/{name}"]
    # /tmp first: a checkout (hence the venv) may itself live under /tmp, and a tmpfs mounted after
    # the runtime's binds would hide them.
    cmd += ["--perms", "1777", "--size", str(tmp_size), "--tmpfs", "/tmp"]
    made: set[Path] = {Path("/usr"), Path("/tmp")}
    for src, dest in binds:
        for parent in _ancestors(Path(dest)):
            if parent not in made and Path("/usr") not in (parent, *parent.parents):
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += ["--ro-bind", str(src), dest]
    return tuple(cmd)


def head(privileged: bool, binds: tuple[tuple[Path, str], ...], tmp_size: int) -> tuple[str, ...]:
    """Namespaces, capabilities, hostname, /usr, /tmp and the read-only `binds` (source, dest)."""
    key = (privileged, binds, tmp_size)
    found = _heads.get(key)
    if found is None:
        found = _build_head(privileged, binds, tmp_size)
        with _lock:
            _heads[key] = found
    return found


def _dir_key(path: Path) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_ino, st.st_mtime_ns)


def tail(state_dir: Path, memory: int) -> tuple[str, ...]:
    """/etc, /proc (host-wide figures covered, procmask.py), /dev, read-only root, /bot as cwd.
    Rebuilt when the folder of the covering files changed (a file replaced or removed)."""
    root = state_dir / "proc"
    key = (state_dir, memory)
    cached = _tails.get(key)
    if cached is not None and cached[0] == _dir_key(root):
        return cached[1]
    masks = procmask.mask_args(state_dir, memory)
    args: tuple[str, ...] = ("--perms", "0755", "--dir", "/etc", "--proc", "/proc", "--dev", "/dev")
    args += ("--remount-ro", "/dev", "--remount-ro", "/", *masks, "--chdir", SANDBOX_BUNDLE)
    with _lock:
        _tails[key] = (_dir_key(root), args)
    return args
