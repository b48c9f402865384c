"""The launch chain's compiled helper: `_launch.c` -> `_arena_launch`, built in place.

A bwrap launch used to exec six programs before the bot: setpriv (death signal), sh (parent
check), sh (cgroup join), prlimit, bwrap, setpriv (uid and capabilities); those besides bwrap cost
about 5 ms of CPU per launch (docs/sandbox.md, "`arena bench sandbox`"). The helper does the first
four steps in one exec, in the same order, and the last one inside the sandbox, about 4 ms less: a
static binary, no dynamic loader to run, no shell. `scripts/build_core.py` (so `make setup`) builds it; a launcher that finds it
missing or older than its source builds it once (gcc, or $CC), and where that fails every launch
takes the old chain of util-linux tools, which `ARENA_LAUNCH_HELPER=0` also forces.
"""

from __future__ import annotations

import functools
import logging
import os
import shlex
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_launch.c"
TARGET = HERE / "_arena_launch"
FLAGS = ["-O2", "-s", "-std=c11", "-Wall", "-Wextra", "-Werror"]


def fresh() -> bool:
    """Whether the helper is built and not older than its source."""
    try:
        return TARGET.stat().st_mtime >= SOURCE.stat().st_mtime and os.access(TARGET, os.X_OK)
    except OSError:
        return False


def build(force: bool = False) -> Path:
    """Compile the helper (static where libc.a is installed: no loader at each exec); raise
    RuntimeError with the compiler's message when it fails."""
    if not force and fresh():
        return TARGET
    cc = shlex.split(os.environ.get("CC", "gcc"))
    tmp = TARGET.with_name(f".{TARGET.name}.{os.getpid()}.tmp")
    error = ""
    for extra in (["-static"], []):
        cmd = [*cc, *FLAGS, *extra, "-o", str(tmp), str(SOURCE)]
        try:
            result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as exc:
            error = str(exc)
            break
        if result.returncode == 0:
            tmp.chmod(0o755)
            tmp.replace(TARGET)  # atomic: a launch never execs a half-written file
            return TARGET
        error = f"{' '.join(cmd)}\n{result.stderr.strip()}"
    tmp.unlink(missing_ok=True)
    raise RuntimeError(f"building the launch helper failed: {error}")


@functools.lru_cache(maxsize=1)
def path() -> Path | None:
    """The helper to launch with, built here if needed; None: use the chain of util-linux tools."""
    if os.environ.get("ARENA_LAUNCH_HELPER", "1") == "0":
        return None
    if fresh():
        return TARGET
    try:
        return build()
    except (RuntimeError, OSError) as exc:
        log.warning("%s; bots start through setpriv, sh and prlimit instead (about 4 ms more CPU each)", exc)
        return None


def outer(helper: Path, parent: int, join: list[str], rlimits: list[tuple[str, int, int]]) -> list[str]:
    """The argv prefix that dies with `parent` (exits 137 if already reparented), joins the `join`
    cgroup.procs files and sets `rlimits` (name, soft, hard), then execs what follows."""
    cmd = [str(helper), "--parent", str(parent)]
    for procs in join:
        cmd += ["--join", procs]
    for name, soft, hard in rlimits:
        cmd += ["--rlimit", f"{name}={soft}:{hard}"]
    return [*cmd, "--"]


def become(helper: Path, uid: int) -> list[str]:
    """The argv prefix (inside the sandbox) that drops to `uid` with no capability, as `setpriv
    --reuid --regid --clear-groups --inh-caps=-all --bounding-set=-all` did."""
    return [str(helper), "--uid", str(uid), "--"]
