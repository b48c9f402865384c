"""The server's players: a process that plays challenges and running seasons until told to stop.

`arena serve --workers N` starts `start_players`, a spawned child process (gRPC does not survive
fork) that loops the local worker pool over `arena.ladder.server_run.ServerRun`, idling while
there is nothing to play. It dies with the server (PR_SET_PDEATHSIG in the pool's children; the
server terminates it on shutdown), and what it leaves half-played goes back to the queue.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
from pathlib import Path

log = logging.getLogger("arena.players")

IDLE = 1.0  # seconds between looks when there is nothing to play


def play_forever(url: str | None, home: str, concurrency: int, launcher: str) -> None:
    """Run in the child: play whatever there is, forever (SIGTERM ends it, releasing its leases)."""
    from arena.ladder.server_run import ServerRun
    from arena.store import Store
    from arena.workers.execute import run_job
    from arena.workers.live import LIVE_DIR
    from arena.workers.pool import run_pool

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    store = Store.open(url, home=home)
    source = ServerRun(store, launcher=launcher, live_dir=Path(home) / LIVE_DIR)
    try:
        while True:
            progress = run_pool(source, run_job, concurrency=concurrency)
            if progress.done or progress.failed:
                log.info("played %d matches (%d failed)", progress.done, progress.failed)
            time.sleep(IDLE)
    except KeyboardInterrupt:
        pass
    finally:
        store.close()


def start_players(
    url: str | None, home: str | Path, concurrency: int, launcher: str
) -> multiprocessing.Process:
    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(
        target=play_forever, args=(url, str(home), concurrency, launcher), name="arena-players"
    )
    proc.start()
    return proc
