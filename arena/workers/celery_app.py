"""Scale-out: the Celery executor (Redis broker). Celery workers only PLAY matches; the season runner
keeps claiming, renewing leases and recording in the database, exactly as with the local pool, so a
match is still recorded once, in one transaction, by the lease holder.

    ARENA_BROKER_URL=redis://127.0.0.1:6379/0 arena worker --concurrency 2     # on each machine
    ARENA_BROKER_URL=redis://127.0.0.1:6379/0 arena season run autumn --matches 500 --executor celery

Bundles are named by their stored path, so workers must see the runner's ARENA_HOME (a shared
volume in a multi-machine setup). Jobs and results travel as JSON (the replay base64-encoded).
"""

from __future__ import annotations

import base64
import os
import threading
import time
from concurrent.futures import Executor, Future
from dataclasses import asdict
from typing import Any

from celery import Celery

from arena.store.jobs import MatchJob, MatchResult

DEFAULT_BROKER = "redis://127.0.0.1:6379/0"
DEFAULT_QUEUE = "arena"
JOB_TIMEOUT = 1800.0  # seconds a runner waits for one match before giving it back


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
    broker_connection_retry_on_startup=True, result_expires=3600, task_default_queue=queue_name(),
)  # fmt: skip


def job_to_dict(job: MatchJob) -> dict:
    return asdict(job)


def job_from_dict(data: dict) -> MatchJob:
    """JSON turned the tuples into lists; the job is frozen and compared by value, so restore them."""
    names = data.get("names") or (("", ""), ("", ""))
    return MatchJob(
        **{
            **data,
            "bundles": tuple(data["bundles"]),
            "rules": tuple(data["rules"]),
            "names": (tuple(names[0]), tuple(names[1])),
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


class CeleryExecutor(Executor):
    """A `concurrent.futures` executor whose jobs run on Celery workers; futures resolve by polling."""

    def __init__(self, queue: str | None = None, timeout: float = JOB_TIMEOUT, poll: float = 0.1) -> None:
        self.queue = queue or queue_name()
        self.timeout, self.poll = timeout, poll
        self._pending: dict[Future, tuple[Any, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="arena-celery-watch", daemon=True)
        self._thread.start()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:  # fn: the local executor's function
        (job,) = args
        future: Future = Future()
        async_result = play_task.apply_async((job_to_dict(job),), queue=self.queue)
        with self._lock:
            self._pending[future] = (async_result, time.monotonic() + self.timeout)
        return future

    def _watch(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                items = list(self._pending.items())
            for future, (async_result, deadline) in items:
                try:
                    if async_result.ready():
                        if async_result.successful():
                            future.set_result(result_from_dict(async_result.get(disable_sync_subtasks=False)))
                        else:
                            future.set_exception(RuntimeError(f"celery task failed: {async_result.result!r}"))
                        async_result.forget()  # the result now lives in the database; drop it from Redis
                    elif time.monotonic() > deadline:
                        async_result.revoke()
                        future.set_exception(
                            TimeoutError(f"no result from the workers in {self.timeout:.0f}s")
                        )
                    else:
                        continue
                except Exception as exc:  # noqa: BLE001 - a broker hiccup fails this job only
                    future.set_exception(exc)
                with self._lock:
                    self._pending.pop(future, None)
            self._stop.wait(self.poll)

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
