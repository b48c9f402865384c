"""The server's players: a process that plays challenges and running seasons until told to stop.

`arena serve --workers N` starts `start_players`, a spawned child process (gRPC does not survive
fork) that loops the local worker pool over `arena.ladder.server_run.ServerRun`, idling while
there is nothing to play. `stop_players` ends it: SIGTERM, which the child handles as the pool's
Ctrl-C (the leases of the matches in flight are released, so they go back to the queue, and the
pool's children are killed), then a join. If the server dies without stopping it, the child gets
SIGTERM from the kernel (PR_SET_PDEATHSIG) and does the same; the pool's own children die with it.

The players are batch work and the server's calls are not: the child lowers its own CPU priority
by `PLAYERS_NICE` before it starts a thread or a process, so the pool, every match's process and
every sandboxed bot inherit it, and a spectator's read wins the CPU over a bot's move whenever the
two compete (docs/deploy.md, "Under load"). An idle CPU is still the ladder's in full: niceness
orders who runs first, it reserves nothing.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType

# Nothing heavy at the top (no store, ladder or NumPy): the players' child lowers its priority before its
# first thread, and OpenBLAS starts threads when NumPy is imported (tests/workers/test_players_priority.py).
from arena.logs import ENV, configure

log = logging.getLogger("arena.players")

IDLE = 1.0  # seconds between looks when there is nothing to play
STOP_GRACE = 30.0  # seconds stop_players waits for the child to release its leases before killing it
PLAYERS_NICE = 10  # added to the server's niceness in the players' process: CFS gives it ~1/10 of the
# server's weight while both want the CPU (nice 10 against 0), and everything it starts inherits it


def _end_with_parent(parent: int) -> None:
    """SIGTERM when the server process dies (and at once if it died before this ran)."""
    from arena.sandbox.spawn import die_with_parent

    die_with_parent(signal.SIGTERM, parent)


_stopping = (
    False  # set by the first SIGTERM/SIGINT; later ones (a Ctrl-C, then the server's SIGTERM) are ignored
)


def _stop_signal(signum: int, frame: FrameType | None) -> None:
    """SIGTERM and SIGINT both mean stop, once. Inside `run_pool` the pool's own SIGINT handler is in
    place and only sets a flag checked at safe points (never in the middle of a claim or a record);
    elsewhere (idling between pool runs) this raises KeyboardInterrupt."""
    global _stopping
    if _stopping:
        return
    _stopping = True
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler is not _stop_signal:
        handler(signal.SIGINT, frame)
    else:
        raise KeyboardInterrupt


def ignore_stop_signals() -> None:
    """Stopping is settled: a late SIGTERM (stop_players sends one to a process it still sees alive; a
    service manager or an impatient operator sends more to `arena serve`) must not kill the
    interpreter's exit. Python's finalisation puts the default action back for every signal it handled
    before it collects the modules (measured: a SIGTERM then ends the process with -15), and leaves
    ignored ones ignored. A signal that lands while a handler is being changed makes the next change
    raise OSError ("ignored due to race condition") and consumes it: so try again."""
    for _ in range(4):
        try:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            return
        except OSError:
            continue


def lower_priority(increment: int = PLAYERS_NICE) -> int:
    """Add `increment` to this process's niceness; the new niceness. Call while the process has one
    thread: on Linux niceness belongs to a thread, and new threads and children take their
    creator's."""
    try:
        return os.nice(increment)
    except OSError as exc:  # a sandbox that forbids it: play at the server's priority, and say so
        log.warning("could not lower the players' CPU priority: %s", exc)
        return os.nice(0)


def play_forever(
    url: str | None,
    home: str,
    concurrency: int,
    launcher: str,
    parent: int,
    nice: int = PLAYERS_NICE,
    stable_ci: float | None = None,
) -> None:
    """Run in the child: play whatever there is until SIGTERM (or SIGINT), releasing its leases."""
    lower_priority(nice)  # first, before any thread: the pool, the matches and the bots inherit it
    os.environ.setdefault(ENV, "info")  # the pool's children log their matches at the server's level
    configure(default="info")
    signal.signal(signal.SIGTERM, _stop_signal)
    signal.signal(signal.SIGINT, _stop_signal)  # a Ctrl-C reaches the whole process group: this too
    store = None
    try:  # a stop signal may come at any point, even before the store is open
        _end_with_parent(parent)
        from arena.ladder.server_run import ServerRun
        from arena.store import Store
        from arena.workers.execute import run_job
        from arena.workers.live import LIVE_DIR
        from arena.workers.pool import run_pool

        store = Store.open(url, home=home)
        settle = {} if stable_ci is None else {"stable_ci": stable_ci}  # None: ServerRun's default
        source = ServerRun(
            store, workers=concurrency, launcher=launcher, live_dir=Path(home) / LIVE_DIR, **settle
        )
        log.info(
            "playing challenges and running seasons: %d ladder matches at a time, challenges in %d more places "
            "(%s sandbox)",
            concurrency,
            source.challenge_slots,
            launcher,
        )
        while not _stopping:
            progress = run_pool(source, run_job, concurrency=source.slots)
            if progress.done or progress.failed:
                log.info("played %d matches (%d failed)", progress.done, progress.failed)
            time.sleep(IDLE)
    except KeyboardInterrupt:
        pass
    finally:
        if store is not None:
            store.close()
        ignore_stop_signals()
    log.info("stopped; matches in flight went back to the queue")


def start_players(
    url: str | None,
    home: str | Path,
    concurrency: int,
    launcher: str,
    nice: int = PLAYERS_NICE,
    stable_ci: float | None = None,
) -> BaseProcess:
    """Start the players' process; call from the thread that lives as long as the server (the main one:
    PR_SET_PDEATHSIG fires when the thread that started the child ends)."""
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(
        target=play_forever,
        args=(url, str(home), concurrency, launcher, os.getpid(), nice, stable_ci),
        name="arena-players",
    )
    proc.start()
    return proc


def stop_players(proc: BaseProcess, grace: float = STOP_GRACE) -> int | None:
    """SIGTERM, wait up to `grace` seconds for the leases to be released, else SIGKILL; the exit code."""
    if proc.is_alive():
        proc.terminate()
    proc.join(grace)
    if proc.is_alive():  # stuck: its leases lapse after LEASE_SECONDS, or sooner (dead pid on this host)
        log.warning("the players' process did not stop within %g s; killing it", grace)
        proc.kill()
        proc.join()
    return proc.exitcode
