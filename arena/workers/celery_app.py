"""Scale-out: the Celery executor (Redis broker). Celery workers only PLAY matches; the season runner
keeps claiming, renewing leases and recording in the database, exactly as with the local pool, so a
match is still recorded once, in one transaction, by the lease holder.

    ARENA_BROKER_URL=redis://127.0.0.1:6379/0 arena worker --concurrency 2     # on each machine
    ARENA_BROKER_URL=redis://127.0.0.1:6379/0 arena season run autumn --matches 500 --executor celery

A job names each bundle by its content hash; a worker fetches the files from the store (the database
ARENA_DATABASE_URL names) into its own cache (ARENA_BUNDLE_CACHE, else $ARENA_HOME/bundles) and checks
them against the hash, so workers share nothing with the runner but the broker and the database.
Jobs and results travel as JSON (the replay base64-encoded).
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import threading
import time
from concurrent.futures import Executor, Future
from dataclasses import asdict
from typing import Any

from celery import Celery
from celery.signals import worker_process_init

from arena.store.jobs import MatchJob, MatchResult

log = logging.getLogger("arena.workers")
DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
DEFAULT_QUEUE = "arena"
JOB_TIMEOUT = 1800.0  # seconds a runner waits for one match before giving it back
#: Seconds between pings of the workers playing this runner's matches (ARENA_WORKER_PING overrides).
LIVENESS_EVERY = float(os.environ.get("ARENA_WORKER_PING") or 10.0)
LOST_AFTER = 3  # pings in a row a worker may miss before its match is given up and requeued
#: So a match whose worker died is back in the queue within about LIVENESS_EVERY * LOST_AFTER plus
#: the pings' own timeouts: 30 to 40 s, inside the 60 s docs/deploy.md promises.
PING_TIMEOUT = 1.0


def broker_url() -> str:
    return os.environ.get("ARENA_BROKER_URL", DEFAULT_BROKER)


def broker_url_shown() -> str:
    """The broker's URL for messages: any password hidden."""
    from urllib.parse import urlsplit

    url = broker_url()
    parts = urlsplit(url)
    if parts.password:
        url = url.replace(f":{parts.password}@", ":***@", 1)
    return url


def queue_name() -> str:
    return os.environ.get("ARENA_CELERY_QUEUE", DEFAULT_QUEUE)


app = Celery("arena", broker=broker_url(), backend=broker_url())
app.conf.update(
    task_serializer="json", result_serializer="json", accept_content=["json"],
    task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
    task_track_started=True,  # the STARTED state names the worker, so the runner can ping it
    broker_connection_retry_on_startup=True, result_expires=3600, task_default_queue=queue_name(),
)  # fmt: skip


@worker_process_init.connect
def _die_with_worker(**_kwargs: Any) -> None:
    """A pool child dies with the worker's main process (PR_SET_PDEATHSIG): an orphan would play on
    while the runner, seeing the worker gone, has already put its match back in the queue."""
    import signal

    from arena.sandbox.spawn import die_with_parent

    die_with_parent(signal.SIGKILL)


def job_to_dict(job: MatchJob) -> dict:
    return asdict(job)


def remote_job(job: MatchJob) -> MatchJob:
    """The job as a worker on another machine gets it: with Redis configured for live events, its
    live target is the match's stream (a runner's file path means nothing there, and a season run's
    jobs name none), so servers anywhere can show the match live (docs/deploy.md)."""
    from dataclasses import replace

    from arena.store.live_target import Transport, stream_target, transport

    if transport() is Transport.REDIS:
        return replace(job, live=stream_target(job.match_id))
    return job


def job_from_dict(data: dict) -> MatchJob:
    """JSON turned the tuples into lists; the job is frozen and compared by value, so restore them."""
    names = data.get("names") or (("", ""), ("", ""))
    return MatchJob(
        **{
            **data,
            "bundles": tuple(data["bundles"]),
            "rules": tuple(data["rules"]),
            "names": (tuple(names[0]), tuple(names[1])),
            "retired": tuple(data.get("retired") or ()),
            "hashes": tuple(data.get("hashes") or ("", "")),
        }
    )


def result_to_dict(result: MatchResult) -> dict:
    return {**asdict(result), "replay": base64.b64encode(result.replay).decode()}


def result_from_dict(data: dict) -> MatchResult:
    return MatchResult(
        **{
            **data,
            "replay": base64.b64decode(data["replay"]),
            "verdicts": tuple(data["verdicts"]),
            "verdict_details": tuple(data["verdict_details"]),
            "lines": tuple(data["lines"]),
            "logs": tuple(data["logs"]),
        }
    )


@app.task(name="arena.play_match")
def play_task(job: dict) -> dict:
    """Runs on a Celery worker: play one match through the sandboxed referee."""
    from arena.workers.execute import run_job

    return result_to_dict(run_job(job_from_dict(job)))


class WorkerLost(RuntimeError):
    """The worker playing a match stopped answering pings: the match is given back to the queue."""


def _is_broker_error(exc: BaseException) -> bool:
    import kombu.exceptions
    import redis.exceptions

    return isinstance(
        exc,
        redis.exceptions.ConnectionError | redis.exceptions.TimeoutError | kombu.exceptions.OperationalError,
    )


class CeleryExecutor(Executor):
    """A `concurrent.futures` executor whose jobs run on Celery workers; futures resolve by polling."""

    def __init__(self, queue: str | None = None, timeout: float = JOB_TIMEOUT, poll: float = 0.1) -> None:
        self.queue = queue or queue_name()
        self.timeout, self.poll = timeout, poll
        self.ping_every = LIVENESS_EVERY
        self._pending: dict[Future, tuple[Any, float]] = {}
        self._missed: dict[str, int] = {}  # worker hostname -> pings missed in a row
        self._last_ping = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="arena-celery-watch", daemon=True)
        self._thread.start()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:  # fn: the local executor's function
        (job,) = args
        future: Future = Future()
        try:
            async_result = play_task.apply_async((job_to_dict(remote_job(job)),), queue=self.queue)
        except Exception as exc:
            if _is_broker_error(exc):
                from arena.workers.pool import ServiceLost

                raise ServiceLost(f"cannot send a match to the broker {broker_url_shown()}: {exc}") from None
            raise
        with self._lock:
            self._pending[future] = (async_result, time.monotonic() + self.timeout)
        return future

    def _lost_workers(self, items: list[tuple[Future, tuple[Any, float]]]) -> dict[Future, str]:
        """Every LIVENESS_EVERY seconds, ping the workers that started this runner's matches; the
        futures whose worker has missed LOST_AFTER pings in a row, with its hostname."""
        if time.monotonic() - self._last_ping < self.ping_every:
            return {}
        self._last_ping = time.monotonic()
        hosts: dict[Future, str] = {}
        for future, (async_result, _) in items:
            info = async_result.info if async_result.state == "STARTED" else None
            if isinstance(info, dict) and info.get("hostname"):
                hosts[future] = str(info["hostname"])
        if not hosts:
            return {}
        replies = app.control.ping(destination=sorted(set(hosts.values())), timeout=PING_TIMEOUT) or []
        alive = {name for reply in replies for name in reply}
        for host in set(hosts.values()):
            self._missed[host] = 0 if host in alive else self._missed.get(host, 0) + 1
        return {f: h for f, h in hosts.items() if self._missed.get(h, 0) >= LOST_AFTER}

    def _watch(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                items = list(self._pending.items())
            try:
                lost = self._lost_workers(items)
            except Exception as exc:  # the broker went away: every job's problem
                lost = {}
                if _is_broker_error(exc):
                    self._fail_all(items, exc)
                    continue
            for future, host in lost.items():
                async_result = self._pending.get(future, (None, 0.0))[0]
                if async_result is None:
                    continue
                log.warning(
                    "match task %s: worker %s missed %d pings in a row; giving the match back to the queue",
                    async_result.id, host, LOST_AFTER,
                )  # fmt: skip
                with contextlib.suppress(Exception):
                    async_result.revoke()  # a redelivered copy is then dropped by the live workers
                future.set_exception(WorkerLost(f"worker {host} stopped answering while playing this match"))
                with self._lock:
                    self._pending.pop(future, None)
            for future, (async_result, deadline) in items:
                if future.done():
                    continue
                try:
                    if async_result.ready():
                        if async_result.successful():
                            future.set_result(result_from_dict(async_result.get(disable_sync_subtasks=False)))
                        else:
                            failure = async_result.result  # e.g. BUNDLE_UNAVAILABLE: its own words
                            future.set_exception(
                                RuntimeError(f"celery task failed: {type(failure).__name__}: {failure}")
                            )
                        async_result.forget()  # the result now lives in the database; drop it from Redis
                    elif time.monotonic() > deadline:
                        async_result.revoke()
                        future.set_exception(
                            TimeoutError(f"no result from the workers in {self.timeout:.0f}s")
                        )
                    else:
                        continue
                except Exception as exc:  # a result that cannot be read fails this job only
                    if _is_broker_error(exc):
                        self._fail_all(items, exc)
                        break
                    future.set_exception(exc)
                with self._lock:
                    self._pending.pop(future, None)
            self._stop.wait(self.poll)

    def _fail_all(self, items: list[tuple[Future, tuple[Any, float]]], exc: BaseException) -> None:
        """The broker is gone: every match in flight fails with ServiceLost, so the run stops (and
        releases its leases) instead of failing job after job."""
        from arena.workers.pool import ServiceLost

        lost = ServiceLost(f"lost the broker {broker_url_shown()}: {exc}")
        for future, _ in items:
            if not future.done():
                future.set_exception(lost)
        with self._lock:
            for future, _ in items:
                self._pending.pop(future, None)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._stop.set()
        with self._lock:
            for future, (async_result, _) in list(self._pending.items()):
                if cancel_futures:
                    async_result.revoke()
                    future.cancel()
            self._pending.clear()
        if wait:
            self._thread.join(timeout=5)
