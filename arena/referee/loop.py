"""One background asyncio loop per process for the referee, so sync callers (the CLI, worker
threads) can run matches concurrently: each call submits a coroutine and waits for its result."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

CLEANUP_SECONDS = 5.0
_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid: int | None = None


def referee_loop() -> asyncio.AbstractEventLoop:
    """The process's referee loop, started on first use (and again in a forked child)."""
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid() or not _loop.is_running():
            loop = new_loop()
            ready = threading.Event()

            def _run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=_run, name="referee-loop", daemon=True).start()
            ready.wait()
            _loop, _pid = loop, os.getpid()
        return _loop


def new_loop() -> asyncio.AbstractEventLoop:
    """uvloop when installed and not disabled (ARENA_UVLOOP=0): less overhead per gRPC operation."""
    if os.environ.get("ARENA_UVLOOP", "1") != "0":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run `coro` on the referee loop from any other thread and return its result.

    If the caller is interrupted (Ctrl-C) or times out, the coroutine is cancelled and given a few
    seconds to clean up (a match then ends void and its bots are killed) before the error propagates.
    """
    future = asyncio.run_coroutine_threadsafe(coro, referee_loop())
    try:
        return future.result(timeout)
    except BaseException:
        if not future.done():
            future.cancel()
            try:
                future.result(CLEANUP_SECONDS)
            except BaseException:
                pass
        raise
