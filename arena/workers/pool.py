"""The local worker pool: plays matches in child processes, one per core by default.

The pool knows nothing about seasons. A `JobSource` hands it claimed jobs (under a lease), is told to
renew the leases of matches still playing, records results, and takes back jobs the pool gives up
on. Only the parent process touches the database; children only play. If the parent dies, the
children die with it (PR_SET_PDEATHSIG) and the source's leases lapse, so the matches go back to
the queue and nothing is half-recorded.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import (
    FIRST_COMPLETED,
    Executor,
    Future,
    ProcessPoolExecutor,
    ThreadPoolExecutor,
    wait,
)
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Protocol

from arena.store.jobs import MatchJob, MatchResult

log = logging.getLogger("arena.workers")
RENEW_EVERY = 10.0  # seconds between lease renewals (leases last LEASE_SECONDS)
WAIT_POLL = 1.0  # seconds between asking a waiting source again (it requeues lost leases itself)


class JobSource(Protocol):
    def next_job(self) -> MatchJob | None:
        """Claim the next job, or None when there is nothing (more) to start now."""

    def renew(self, match_ids: list[int]) -> None:
        """Extend the leases of matches still playing."""

    def record(self, job: MatchJob, result: MatchResult) -> None:
        """Store a finished match (result, replay, ratings) in one transaction."""

    def fail(self, job: MatchJob, error: str) -> None:
        """The job raised instead of producing a result: requeue it, or give up on it."""

    def release(self, match_ids: list[int]) -> None:
        """Put claimed matches back in the queue (interrupted, or lost with another job's worker):
        through no fault of their own, so the attempt is not counted against them."""


def _waits(source: JobSource) -> bool:
    """Whether `source`, with no job to start now and none in flight here, still expects work: a
    source may say so with a `waiting()` method (a season whose matches other runners hold)."""
    waiting = getattr(source, "waiting", None)
    return bool(waiting and waiting())


class ServiceLost(RuntimeError):
    """An executor lost a service every job needs (the broker): not one job's failure, so the run
    stops (its leases released) instead of failing job after job."""


@dataclass
class Progress:
    done: int = 0
    running: int = 0
    failed: int = 0
    started: float = 0.0
    target: int | None = None  # total the caller aims for, if known (for the ETA)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    @property
    def rate(self) -> float:
        """Matches per minute in this run."""
        return 60.0 * self.done / self.elapsed if self.elapsed > 0 else 0.0


def _die_with_parent(parent: int) -> None:
    """Child initialiser: get SIGKILLed when the runner dies, so no match outlives its lease holder.

    The parent handles Ctrl-C (it releases the leases and kills the children), so children ignore
    SIGINT; they start with it blocked (see `_submit`) so a Ctrl-C during their start-up
    cannot print tracebacks either.
    """
    from arena.sandbox.spawn import die_with_parent

    die_with_parent(signal.SIGKILL, parent)
    from arena.logs import ENV, FORMAT_ENV, configure

    if os.environ.get(ENV) or os.environ.get(FORMAT_ENV):  # the runner logs: its children's lines too
        configure(default="info")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _run_marked(execute: Callable[[MatchJob], MatchResult], marks: str, job: MatchJob) -> MatchResult:
    """In a pool child: leave `<marks>/<match id>` holding this process's pid while the job runs, so
    that when a child dies the parent knows which job was in it (concurrent.futures does not say)."""
    mark = os.path.join(marks, str(job.match_id))
    with open(mark, "w") as fh:
        fh.write(str(os.getpid()))
    try:
        return execute(job)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(mark)


def _culprits(marks: str | None, processes: dict[int, object], jobs: list[MatchJob]) -> set[int] | None:
    """The match ids whose own worker died (killed, crashed, OOM), or None when that cannot be told.

    When one child dies, ProcessPoolExecutor SIGTERMs all the others and fails every job in flight.
    The dead one is the child whose exit was anything but that SIGTERM; its job is the one whose
    mark names its pid. Every other job was lost through no fault of its own."""
    if marks is None:
        return None
    deadline = time.monotonic() + 5.0  # the executor's own thread reaps them: wait until it has
    while time.monotonic() < deadline:
        codes = {pid: getattr(proc, "exitcode", None) for pid, proc in processes.items()}
        if all(code is not None for code in codes.values()):
            break
        time.sleep(0.02)
    dead = {pid for pid, code in codes.items() if code is not None and code != -signal.SIGTERM}
    if not dead:
        return None
    out: set[int] = set()
    for job in jobs:
        try:
            with open(os.path.join(marks, str(job.match_id))) as fh:
                pid = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            continue  # not started: it was waiting in the pool's queue
        if pid in dead:
            out.add(job.match_id)
    return out


def _submit(executor: Executor, execute: Callable[[MatchJob], MatchResult], job: MatchJob) -> Future:
    """Submit with SIGINT blocked, so children spawned now inherit it blocked until their initialiser.
    A Ctrl-C meanwhile stays pending and reaches this process right after."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        return executor.submit(execute, job)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def default_concurrency() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _executor(concurrency: int, threads: bool) -> Executor:
    if threads:
        return ThreadPoolExecutor(concurrency, thread_name_prefix="arena-match")
    ctx = multiprocessing.get_context("spawn")  # gRPC does not survive fork
    return ProcessPoolExecutor(
        concurrency, mp_context=ctx, initializer=_die_with_parent, initargs=(os.getpid(),)
    )


@contextlib.contextmanager
def _deferred_interrupt() -> Iterator[Callable[[], bool]]:
    """While the pool runs, Ctrl-C only sets a flag that the loop checks at safe points (never in the
    middle of a claim, a submit or a record), so every claimed match is either in flight and released,
    or not claimed at all. Only the main thread can own SIGINT; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    hits: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hits.append(signum))
    try:
        yield lambda: bool(hits)
    finally:
        signal.signal(signal.SIGINT, previous)


def run_pool(
    source: JobSource,
    execute: Callable[[MatchJob], MatchResult],
    *,
    concurrency: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    target: int | None = None,
    threads: bool = False,
    executor_factory: Callable[[int], Executor] | None = None,
) -> Progress:
    """Play jobs from `source` until it has none and nothing is running. Ctrl-C releases the leases
    and raises KeyboardInterrupt.

    Children are processes by default (a match is CPU work for the referee); `threads=True` plays
    in this process's threads, for in-process executors and tests; `executor_factory` supplies
    another executor (the Celery one), given the number of matches to keep in flight.
    """
    concurrency = concurrency or default_concurrency()
    progress = Progress(started=time.monotonic(), target=target)
    make = executor_factory or (lambda n: _executor(n, threads))
    marks = tempfile.mkdtemp(prefix="arena-pool-") if executor_factory is None and not threads else None
    if marks is not None:
        execute = functools.partial(_run_marked, execute, marks)
    executor = make(concurrency)
    inflight: dict[Future, MatchJob] = {}
    last_renew = time.monotonic()
    with _deferred_interrupt() as interrupted:
        try:
            while True:
                while len(inflight) < concurrency and not interrupted():
                    job = source.next_job()
                    if job is None:
                        break
                    try:
                        inflight[_submit(executor, execute, job)] = job
                    except BrokenProcessPool:  # a child died since the last wait: this job never started
                        source.release([job.match_id])
                        if not inflight:  # nothing left to report the breakage: start fresh children now
                            executor.shutdown(wait=False, cancel_futures=True)
                            executor = make(concurrency)
                            continue
                        break  # the in-flight futures fail as broken below, and the pool is rebuilt there
                    except BaseException:  # e.g. the broker is gone: this job never left, give it back too
                        _release_quietly(source, [job.match_id])
                        raise
                if interrupted():
                    raise KeyboardInterrupt
                progress.running = len(inflight)
                if on_progress:
                    on_progress(progress)
                if not inflight:
                    if _waits(source):  # others hold what is left: wait for it, or for their leases to end
                        time.sleep(WAIT_POLL)
                        continue
                    return progress
                processes = dict(getattr(executor, "_processes", None) or {})  # pid -> child, for _culprits
                finished, _ = wait(list(inflight), timeout=0.5, return_when=FIRST_COMPLETED)
                if any(_broke(f) for f in finished):  # a child died: every job in flight fails with it
                    wait(list(inflight), timeout=30)
                    finished = {f for f in inflight if f.done()}
                    lost = [inflight[f] for f in finished if _broke(f)]
                    guilty = _culprits(marks, processes, lost)
                    log.warning(
                        "a pool worker died: %s; %d other match(es) in flight go back to the queue",
                        f"match(es) {sorted(guilty)} counted an attempt" if guilty else "no job was in it",
                        len(lost) - len(guilty or ()),
                    ) if guilty is not None else log.warning("a pool worker died; cannot tell whose job")
                else:
                    guilty = set()
                broken = False
                for future in finished:
                    job = inflight.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        broken = True
                        if guilty is not None and job.match_id not in guilty:
                            source.release([job.match_id])  # lost with another job's worker: not its fault
                            continue
                        # its own worker died (e.g. OOM-killed): count it against the job, so one that
                        # always kills its worker ends up "failed", not in a loop
                        progress.failed += 1
                        source.fail(job, "the worker process died while playing this match")
                        continue
                    except ServiceLost:
                        inflight[future] = job  # released with the others on the way out
                        raise
                    except Exception as exc:  # a job's failure must not stop the season
                        progress.failed += 1
                        source.fail(job, f"{type(exc).__name__}: {exc}")
                        continue
                    source.record(job, result)
                    progress.done += 1
                if broken:  # give everything else back and start fresh children
                    source.release([j.match_id for j in inflight.values()])
                    inflight.clear()
                    executor.shutdown(wait=False, cancel_futures=True)
                    executor = make(concurrency)
                if inflight and time.monotonic() - last_renew > RENEW_EVERY:
                    source.renew([j.match_id for j in inflight.values()])
                    last_renew = time.monotonic()
        except BaseException:
            _release_quietly(source, [j.match_id for j in inflight.values()])
            _kill_children(executor)
            try:  # join the executor's manager thread now, so nothing is left for the exit handlers
                executor.shutdown(wait=True, cancel_futures=True)
            except Exception:  # a broken pool is expected here
                pass
            raise
        finally:
            executor.shutdown(wait=False, cancel_futures=True)
            if marks is not None:
                shutil.rmtree(marks, ignore_errors=True)


def _broke(future: Future) -> bool:
    return not future.cancelled() and isinstance(future.exception(), BrokenProcessPool)


def _release_quietly(source: JobSource, match_ids: list[int]) -> None:
    """Release on the way out; when the database itself is what failed, the first error is the one
    to report (the leases then lapse after LEASE_SECONDS, or at once for a runner on this host)."""
    try:
        source.release(match_ids)
    except Exception as exc:
        log.info("could not release %d lease(s): %s", len(match_ids), exc)


def _kill_children(executor: Executor) -> None:
    for proc in list((getattr(executor, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except Exception:  # already gone
            pass
