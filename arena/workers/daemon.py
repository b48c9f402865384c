"""The server's players: a process that plays challenges and running seasons until told to stop.

`arena serve --workers N` starts `start_players`, a spawned child process (gRPC does not survive
fork) that loops the local worker pool over `arena.ladder.server_run.ServerRun`, idling while
there is nothing to play. `stop_players` ends it: SIGTERM, which the child handles as the pool's
Ctrl-C (the leases of the matches in flight are released, so they go back to the queue, and the
pool's children are killed), then a join. If the server dies without stopping it, the child gets
SIGTERM from the kernel (PR_SET_PDEATHSIG) and does the same; the pool's own children die with it.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import time
from pathlib import Path
from types import FrameType

log = logging.getLogger("arena.players")

IDLE = 1.0  # seconds between looks when there is nothing to play
STOP_GRACE = 30.0  # seconds stop_players waits for the child to release its leases before killing it


def _end_with_parent(parent: int) -> None:
    """SIGTERM when the server process dies (and at once if it died before this ran)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def _sigterm_as_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM does what Ctrl-C does: inside `run_pool` that is a flag checked at safe points (never in
    the middle of a claim or a record), elsewhere a KeyboardInterrupt."""
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler):
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def play_forever(url: str | None, home: str, concurrency: int, launcher: str, parent: int) -> None:
    """Run in the child: play whatever there is until SIGTERM (or SIGINT), releasing its leases."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    _end_with_parent(parent)
    from arena.ladder.server_run import ServerRun
    from arena.store import Store
    from arena.workers.execute import run_job
    from arena.workers.live import LIVE_DIR
    from arena.workers.pool import run_pool

    store = Store.open(url, home=home)
    source = ServerRun(store, launcher=launcher, live_dir=Path(home) / LIVE_DIR)
    log.info("playing challenges and running seasons, %d at a time (%s sandbox)", concurrency, launcher)
    try:
        while True:
            progress = run_pool(source, run_job, concurrency=concurrency)
            if progress.done or progress.failed:
                log.info("played %d matches (%d failed)", progress.done, progress.failed)
            time.sleep(IDLE)
    except KeyboardInterrupt:
        log.info("stopped; matches in flight went back to the queue")
    finally:
        store.close()


def start_players(
    url: str | None, home: str | Path, concurrency: int, launcher: str
) -> multiprocessing.Process:
    """Start the players' process; call from the thread that lives as long as the server (the main one:
    PR_SET_PDEATHSIG fires when the thread that started the child ends)."""
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(
        target=play_forever,
        args=(url, str(home), concurrency, launcher, os.getpid()),
        name="arena-players",
    )
    proc.start()
    return proc


def stop_players(proc: multiprocessing.Process, grace: float = STOP_GRACE) -> int | None:
    """SIGTERM, wait up to `grace` seconds for the leases to be released, else SIGKILL; the exit code."""
    if proc.is_alive():
        proc.terminate()
    proc.join(grace)
    if proc.is_alive():  # stuck: its leases lapse after LEASE_SECONDS, or sooner (dead pid on this host)
        log.warning("the players' process did not stop within %g s; killing it", grace)
        proc.kill()
        proc.join()
    return proc.exitcode
