"""Start sandbox processes so that they die with the process that started them.

Two halves of one job, both resting on PR_SET_PDEATHSIG (the kernel signals a child when its parent
dies):

- `popen` forks every launch from one long-lived daemon thread. PR_SET_PDEATHSIG (and bwrap's
  `--die-with-parent`, which uses it) fires when the *thread* that forked the child exits, not the
  process. A referee launches bots from short-lived executor threads (`run_in_executor`, which
  `asyncio.run` shuts down at the end), so a bot forked there would be SIGKILLed as soon as its
  thread ended. From the spawner thread, which lives as long as the process, the bots die with the
  referee and not earlier.
- `guarded(argv)` makes an exec'd command die with its parent: the launch helper
  (`launch_helper.py`; where it is not built, `setpriv --pdeathsig KILL` and a one-line shell) sets
  the signal before anything else of the command runs, then checks that its parent is still the
  launching process (had the parent died before the signal was set, the child would have been
  reparented and never told) and execs the command. A SIGSTOPped bot still dies of SIGKILL.
- `die_with_parent()` is the same for a Python child process (pool and Celery workers), which
  calls it first thing, in the child itself.

docs/sandbox.md ("Cleanup") says what this guarantees and how it is tested.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import shutil
import signal
import subprocess
import threading
from concurrent.futures import Future
from typing import Any

from arena.sandbox import launch_helper

PR_SET_PDEATHSIG = 1
#: `$0` is the launching process's pid; sh sets $PPID from getppid() as it starts, after setpriv's prctl.
GUARD = '[ "$PPID" = "$0" ] || exit 137; exec "$@"'
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"

_jobs: queue.SimpleQueue[tuple[Future, dict[str, Any]]] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _serve() -> None:
    while True:
        fut, kwargs = _jobs.get()
        if not fut.set_running_or_notify_cancel():
            continue
        try:
            fut.set_result(subprocess.Popen(**kwargs))
        except BaseException as exc:  # handed to the caller
            fut.set_exception(exc)


def popen(**kwargs: Any) -> subprocess.Popen[bytes]:
    """`subprocess.Popen(**kwargs)`, forked from the spawner thread."""
    global _thread
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_serve, name="arena-sandbox-spawner", daemon=True)
            _thread.start()
    fut: Future[subprocess.Popen[bytes]] = Future()
    _jobs.put((fut, kwargs))
    return fut.result()


def guardable() -> bool:
    """Whether `guarded` can work here (the launch helper, or util-linux's setpriv)."""
    return launch_helper.path() is not None or (os.path.exists(SETPRIV) and os.path.exists("/bin/sh"))


def guarded(argv: list[str], helper: bool = True) -> list[str]:
    """`argv`, wrapped to get SIGKILL when this process dies; start it with `popen`. Unchanged
    where neither the helper nor setpriv is there (the caller says so once). `helper` False:
    setpriv and sh even where the helper is built (the chain before it)."""
    found = launch_helper.path() if helper else None
    if found is not None:
        return [*launch_helper.outer(found, os.getpid(), [], []), *argv]
    if not (os.path.exists(SETPRIV) and os.path.exists("/bin/sh")):
        return list(argv)
    return [SETPRIV, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", GUARD, str(os.getpid()), *argv]


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """In a child process: get `sig` when the parent dies. With `parent` (its pid, passed down by
    the parent), a child whose parent died before this ran gets `sig` at once."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)
