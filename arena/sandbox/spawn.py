"""Start sandbox processes from one long-lived thread.

bwrap's `--die-with-parent` uses PR_SET_PDEATHSIG, which fires when the *thread* that forked the
process exits, not the process. A referee that launches bots from a short-lived worker thread would
see its bots SIGKILLed as soon as that thread ends. All launches therefore go through this single
daemon thread, which lives as long as the process does: the bots die with the referee, not earlier.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from concurrent.futures import Future
from typing import Any

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
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
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
