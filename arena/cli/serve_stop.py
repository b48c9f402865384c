"""How `arena serve` stops: on SIGINT or SIGTERM, within about 10 s whatever is running.

What used to hold it (measured: a server with one open event stream did not exit 40 s after
SIGTERM): uvicorn waits for every open response to end, and a live event stream lasts up to 10
minutes; the players' process was given 30 s; and Python's exit joins every worker thread, so a
bundle's build (up to 300 s) held the process after everything else had stopped.

Now, once the stop begins: every watch stream ends at its next look (at most a second) with its
status (`ops_watch.end_streams`; a browser looks again by itself); the web, the players' process and
the referee stop at the same time, the web's requests with `WEB_GRACE` seconds to finish (then they
are cancelled), the players with `PLAYERS_GRACE` seconds to release their leases (then they are
killed: their leases lapse), the referee's own matches with 3 s; calls still running on the loop's
threads get `EXIT_GRACE` seconds, and so do builds. A build still running then is interrupted
(`ServerStopped` is raised in its thread): it kills its sandbox, removes its unpacked and staged
copies and registers nothing, and its owner submits again. A thread that has not ended `EXIT_GRACE`
seconds after that is left behind: the process exits without it, and a sandbox it started dies
with the process (PR_SET_PDEATHSIG) (docs/deploy.md, "Stopping").
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("arena.serve")

WEB_GRACE = 3.0  # seconds the web's requests get to end once the stop began; then they are cancelled
PLAYERS_GRACE = 5.0  # seconds the players' process gets to release its leases; then it is killed
REFEREE_GRACE = 3.0  # seconds the referee's own matches get to end as void, SHUTDOWN
EXIT_GRACE = 2.0  # seconds threads still running (calls, builds) get once everything else stopped


def quiet_stop_signals(loop: asyncio.AbstractEventLoop) -> None:
    """The stop is under way: later SIGINTs and SIGTERMs are ignored from here to the process's exit.
    The loop's handlers would only set the stop again, and once the loop closes Python's default action
    is back, so a SIGTERM during the exit ended the process with -15. Both signals are blocked while the
    handlers are swapped, so none lands in between (a pending one is discarded once ignored)."""
    from arena.workers.daemon import ignore_stop_signals

    stops = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)
    try:
        for sig in stops:
            loop.remove_signal_handler(sig)
        ignore_stop_signals()
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, stops)


async def stop_all(server: Any, web_server: Any, web_task: asyncio.Task[Any] | None, players: Any) -> None:
    """Stop the watch streams, then the web, the players' process and the referee at once."""
    from arena.service.ops_watch import end_streams
    from arena.workers.daemon import stop_players

    end_streams()  # the streams end by themselves, so the web's wait for its responses is short

    async def web() -> None:
        if web_task is not None:
            web_server.config.timeout_graceful_shutdown = WEB_GRACE  # then uvicorn cancels them
            web_server.should_exit = True
            await web_task

    async def players_stopped() -> None:
        if players is not None:  # its matches in flight go back to the queue
            await asyncio.to_thread(stop_players, players, PLAYERS_GRACE)

    await asyncio.gather(web(), players_stopped(), server.stop(REFEREE_GRACE))


def run(main: Coroutine[Any, Any, None]) -> None:
    """`asyncio.run(main)`, except that the loop's threads still busy at its end are waited for
    `EXIT_GRACE` seconds, not for ever (`asyncio.run` joins them without a limit)."""
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main)
    finally:
        try:
            rest = asyncio.all_tasks(loop)
            for task in rest:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*rest, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            try:
                loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), EXIT_GRACE))
            except TimeoutError:
                log.warning("calls still running after %g s: the server stops without them", EXIT_GRACE)
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def threads_now() -> set[threading.Thread]:
    return set(threading.enumerate())


class ServerStopped(BaseException):
    """Raised in a thread still running once the server has stopped (a build): its `finally` blocks
    and handlers clean up on the way out (the build's sandbox is killed, its unpacked and staged
    copies removed, nothing registered), as a Ctrl-C in a local `arena bots submit` would."""


def _interrupt(thread: threading.Thread) -> None:
    """Raise `ServerStopped` in `thread` at its next Python instruction (a build polls its sandbox
    several times a second; a thread blocked in a system call is reached once the call returns)."""
    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread.ident), ctypes.py_object(ServerStopped)
        )


def _join(threads: list[threading.Thread], seconds: float) -> list[threading.Thread]:
    deadline = time.monotonic() + seconds
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return [t for t in threads if t.is_alive()]


def leave_stragglers(before: set[threading.Thread]) -> None:
    """Once the server has stopped: threads it started that still run (a build, up to 300 s; Python's
    exit would join it) get `EXIT_GRACE` seconds, then are interrupted (`ServerStopped`) and get as
    long again to clean up; any still running then is left behind: the process exits with 0, its
    exit handlers run and its output flushed."""
    current = threading.current_thread()
    left = [t for t in threading.enumerate() if t not in before and t is not current and not t.daemon]
    left = _join(left, EXIT_GRACE)
    if not left:
        return
    names = ", ".join(sorted(t.name for t in left))
    log.warning(
        "%d thread(s) still running (%s), a build among them: interrupted (the build is abandoned and "
        "not registered; its owner submits it again)",
        len(left),
        names,
    )
    for t in left:
        _interrupt(t)
    left = _join(left, EXIT_GRACE)
    if not left:
        return
    log.warning("%d thread(s) still running after the interruption: exiting without them", len(left))
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)
