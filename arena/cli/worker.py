"""`arena worker`: a Celery worker that plays ladder matches for runners using `--executor celery`."""

from __future__ import annotations

from typing import Any

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import warm_option
from arena.cli.metrics_options import Monitoring, monitoring_options


@click.command()
@click.option(
    "--concurrency", type=click.IntRange(1), default=None, help="Matches at once (default: one per core)."
)
@click.option("--queue", default=None, help="Queue to consume (default: ARENA_CELERY_QUEUE, else 'arena').")
@click.option("--loglevel", default="warning", show_default=True, help="Celery log level.")
@warm_option
@monitoring_options(alerts=False)
def worker(
    concurrency: int | None, queue: str | None, loglevel: str, warm: bool | None, monitoring: Monitoring
) -> None:
    """Play matches from the Celery broker (ARENA_BROKER_URL, default redis://127.0.0.1:6379/0).

    Only plays: the runner (`arena season run --executor celery`) claims, records and rates. The
    worker must see the runner's ARENA_HOME (bundles are named by path).
    """

    from arena.extras import require

    require("celery", "the Celery worker")  # else one line naming the extra (arena/cli/__init__.py)
    import redis

    from arena.workers.celery_app import app, broker_url, queue_name
    from arena.workers.pool import default_concurrency

    try:
        redis.Redis.from_url(broker_url(), socket_connect_timeout=3).ping()
    except redis.exceptions.RedisError as exc:
        raise UserError(f"cannot reach the broker at {broker_url()} ({exc}); set ARENA_BROKER_URL") from None
    from arena.cli.ladder_common import apply_warm, warn_weak_limits

    warn_weak_limits("bwrap")  # the worker plays with the runner's launcher; bwrap is the default
    apply_warm(warm, "bwrap")  # its pool's processes inherit the switch (for the runner's bwrap jobs)
    monitoring.begin()  # before the pool's children start: they count into the same folder
    monitoring.listen()  # matches played and their time; the runner's /metrics has the queue
    try:
        _run(app, concurrency or default_concurrency(), queue or queue_name(), loglevel)
    finally:
        monitoring.end()


def _run(app: Any, concurrency: int, queue: str, loglevel: str) -> None:
    import os
    import secrets

    _json_logs()
    app.worker_main(
        [
            "worker",
            f"--concurrency={concurrency}",
            "--pool=prefork",
            f"--queues={queue}",
            f"--loglevel={loglevel}",
            # Unique per worker process: the runner pings it by this name. The pid alone is not: in
            # containers every worker is pid 1, and containers that share a network namespace (compose
            # `network_mode: service:...`, a Kubernetes pod) share its hostname too, so the survivor
            # answered the pings meant for a SIGKILLed replica and its match was never requeued.
            f"--hostname=arena{os.getpid()}-{secrets.token_hex(3)}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
    )


def _json_logs() -> None:
    """With `--log-format json` (ARENA_LOG_FORMAT), Celery's own handlers write the arena's JSON lines,
    with the match and request ids of the job a line is about (`arena.logs`)."""
    import os

    from arena.logs import FORMAT_ENV

    if os.environ.get(FORMAT_ENV, "").lower() != "json":
        return
    from celery import signals

    from arena.logs import JsonFormatter, MatchField

    def shape(logger, **_kwargs) -> None:
        for handler in logger.handlers:
            handler.setFormatter(JsonFormatter())
            handler.addFilter(MatchField())

    signals.after_setup_logger.connect(shape, weak=False)
    signals.after_setup_task_logger.connect(shape, weak=False)
