"""Where submitted bundles build, and the threads that serve calls: two pools, so a build never
holds a thread a read needs.

A build may run for minutes (a bundle's `build` step, up to its `build_seconds`). `BuildSlots` runs
builds on a pool of their own, `slots` at once in all and one at a time per owner: an owner's next
build waits (holding no thread) until the previous one is over, and a build waiting for a free slot
holds no thread either. Every other piece of work of a call (a database read, a token check) runs
on the event loop's default executor, which `call_executor` sizes so that every stream the server
allows can have a read in flight and calls still find a thread (`install_call_executor`).

With shared state (`share`), one build per owner holds across replicas too: a build takes its
owner's lease in Redis before it runs (waiting on its build thread while another replica builds
for the owner) and gives it back when it ends, however it ends; a crashed replica's lease expires.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from arena import metrics
from arena.access.shared_state import Leases, SharedState, leases

log = logging.getLogger("arena.service")
T = TypeVar("T")

DEFAULT_SLOTS = 2  # builds at once in all (`arena serve --build-slots`)
CALL_THREADS = 32  # threads for unary calls, on top of one per stream the server allows
OWNER_POLL = 0.25  # seconds between looks at an owner's shared build lease held by another replica
WAITING = "waiting for a build slot ({slots} build(s) run at once, one per owner)\n"


class BuildSlots:
    """A bounded executor for builds: at most `slots` run at once, at most one per owner; the others
    wait in order, holding no thread. `running` and `peak` count builds running now and at most."""

    def __init__(self, slots: int = DEFAULT_SLOTS) -> None:
        if slots < 1:
            raise ValueError("build slots: at least 1")
        self.slots = slots
        self._pool = ThreadPoolExecutor(max_workers=slots, thread_name_prefix="arena-build")
        self._lock = threading.Lock()
        self._last: dict[str, Future[object]] = {}  # each owner's latest build: the next one follows it
        self._jobs: set[Future[object]] = set()  # builds not over yet
        self._queued = 0  # builds handed to the pool and not started
        self._closed = False
        self.running = 0
        self.peak = 0
        self.leases: Leases | None = None  # one build per owner across replicas (`share`)

    def share(self, state: SharedState) -> None:
        """Hold each build's owner slot in `state`'s Redis too, so replicas build one per owner."""
        self.leases = leases(state, "build")

    @property
    def pending(self) -> int:
        """Builds handed in and not over: running, or waiting for a slot."""
        with self._lock:
            return len(self._jobs)

    def submit(self, owner: str, fn: Callable[[], T]) -> tuple[Future[T], bool]:
        """Queue `fn` as `owner`'s next build: its future, and whether it has to wait for a slot
        (another build of the owner's, or every slot taken). Cancelling the future before the build
        starts drops it."""
        job: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the build slots are closed: the server is stopping")
            before = self._last.get(owner)
            waits = (before is not None and not before.done()) or self.running + self._queued >= self.slots
            self._last[owner] = job  # type: ignore[assignment]
            self._jobs.add(job)  # type: ignore[arg-type]

        def enqueue(_: object = None) -> None:
            with self._lock:
                if job.done() or self._closed:
                    job.cancel()
                    return
                self._queued += 1
            try:
                self._pool.submit(self._work, owner, job, fn)
            except RuntimeError:  # closed in between: the server is stopping
                with self._lock:
                    self._queued -= 1
                job.cancel()

        def forget(_: object) -> None:
            with self._lock:
                self._jobs.discard(job)
                if self._last.get(owner) is job:
                    del self._last[owner]

        job.add_done_callback(forget)
        if before is None:
            enqueue()
        else:
            before.add_done_callback(enqueue)  # at once when it is already over
        return job, waits

    def _work(self, owner: str, job: Future[T], fn: Callable[[], T]) -> None:
        with self._lock:
            self._queued -= 1
        if not job.set_running_or_notify_cancel():  # its caller went away while it waited
            return
        shared, holder = self.leases, None
        while shared is not None and (holder := shared.acquire(owner, 1, 1 << 30)) is None:
            if self._closed:  # another replica builds for the owner, and this server stops
                job.set_exception(RuntimeError("the build slots are closed: the server is stopping"))
                return
            time.sleep(OWNER_POLL)
        with self._lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        started = time.monotonic()
        try:
            result = fn()
        except BaseException as exc:  # handed to the caller, who maps it to a status
            self._over(owner, holder)
            metrics.build_done(time.monotonic() - started, ok=False)
            job.set_exception(exc)
        else:
            self._over(owner, holder)  # before the owner's next build may start
            metrics.build_done(time.monotonic() - started, ok=True)
            job.set_result(result)

    def _over(self, owner: str, holder: str | None) -> None:
        with self._lock:
            self.running -= 1
        if self.leases is not None and holder is not None:
            try:
                self.leases.release(owner, holder)
            except Exception:  # Redis away: the lease expires by itself
                log.warning("giving back %s's build lease failed", owner, exc_info=True)

    async def run(self, owner: str, fn: Callable[[], T], on_wait: Callable[[], None] | None = None) -> T:
        """`fn()` as `owner`'s build, awaited without holding a thread; `on_wait()` is called once
        when it has to wait for a slot. Cancelled before it starts, it never runs; cancelled while
        it runs, it finishes unwatched (a build cannot be stopped half way)."""
        job, waits = self.submit(owner, fn)
        if waits and on_wait is not None:
            on_wait()
        return await asyncio.wrap_future(job)

    def close(self) -> None:
        """Drop the builds still waiting (their callers see CANCELLED); the running ones finish."""
        with self._lock:
            self._closed = True
            waiting = list(self._jobs)
        for job in waiting:
            job.cancel()  # fails, harmlessly, for the running ones
        self._pool.shutdown(wait=False, cancel_futures=True)


def call_threads() -> int:
    """Threads of the executor that serves calls: one per stream the server allows (watchers,
    uploads), so that every stream can have a read in flight, plus CALL_THREADS for the rest."""
    from arena.service import ops_watch
    from arena.service.quota import TOTAL_UPLOADS

    return ops_watch.TOTAL + TOTAL_UPLOADS + CALL_THREADS


_INSTALLED: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ThreadPoolExecutor] = (
    weakref.WeakKeyDictionary()
)


def install_call_executor(loop: asyncio.AbstractEventLoop) -> ThreadPoolExecutor:
    """Make `loop`'s default executor (asyncio.to_thread's) the calls' own, sized by `call_threads`
    (once per loop): Python's default, CPU count + 4 threads, is starved by a handful of long calls."""
    pool = _INSTALLED.get(loop)
    if pool is None:
        pool = ThreadPoolExecutor(max_workers=call_threads(), thread_name_prefix="arena-call")
        loop.set_default_executor(pool)
        _INSTALLED[loop] = pool
    return pool
