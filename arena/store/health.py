"""The arena's health as `/healthz` and `/metrics` report it: the queue, the workers' leases, the disk.

Three alerts (docs/deploy.md, "Metrics" and "Alerts"):
- `stuck_queue`: matches are queued, the oldest for longer than `stuck_minutes`, and no match was
  recorded in that time either: whatever should play them is not playing.
- `worker_silent`: a running match's lease ended more than `LAPSE_GRACE` seconds ago and nobody
  took it back. A worker renews its leases every 10 s while it plays (`arena.workers.pool`), so a
  lease that lapsed means its worker stopped renewing (dead, frozen, or cut off from the store),
  and no other runner is alive to requeue its matches. A worker that dies idle holds no lease:
  Prometheus sees that one as its own `/metrics` target going down (`up == 0`).
- `disk_low`: the filesystem of ARENA_HOME (bundles, replays, the SQLite file) has less than
  `disk_free_min` bytes free.

The figures come from four indexed queries (the queue by `ix_matches_queue` and `ix_matches_claim`,
the last recording by `ix_matches_finished`), read at most once per `ttl` seconds however often
they are asked for, so that scrapes and health checks cannot load the store.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from sqlalchemy import case, func, select

from arena.store.models import Match

log = logging.getLogger("arena.health")

TTL = 5.0  # seconds a reading is reused
LAPSE_GRACE = 60.0  # seconds past a lease's end before it counts as lapsed (runners requeue sooner)
STUCK_MINUTES = 15.0
DISK_FREE_MIN = 1 << 30  # bytes: 1 GiB


class Alert(StrEnum):
    STUCK_QUEUE = "stuck_queue"
    WORKER_SILENT = "worker_silent"
    DISK_LOW = "disk_low"
    STORE_UNREACHABLE = "store_unreachable"


@dataclass(frozen=True)
class Thresholds:
    stuck_minutes: float = STUCK_MINUTES
    disk_free_min: int = DISK_FREE_MIN  # bytes


@dataclass(frozen=True)
class Figures:
    """One reading. Ages in seconds; None when there is no such match."""

    queued: int
    oldest_queued_age: float | None
    running: int
    lapsed: int
    last_recorded_age: float | None
    disk_free: int | None
    error: str = ""  # the store could not be read: the reason


def _age(then: datetime | None, now: datetime) -> float | None:
    return None if then is None else max(0.0, (now - then).total_seconds())


def read_figures(store: Any, now: float | None = None) -> Figures:
    """Read the figures from `store` (an `arena.store.Store`) now."""
    wall = time.time() if now is None else now
    moment = datetime.fromtimestamp(wall, UTC).replace(tzinfo=None)
    with store.read() as s:
        queued, first = s.execute(
            select(func.count(), func.min(Match.id)).where(Match.status == "queued")
        ).one()
        created = s.scalar(select(Match.created_at).where(Match.id == first)) if first is not None else None
        lapsed_when = case((Match.lease_expires < wall - LAPSE_GRACE, 1), else_=0)
        running, lapsed = s.execute(
            select(func.count(), func.coalesce(func.sum(lapsed_when), 0)).where(Match.status == "running")
        ).one()
        last = s.scalar(select(func.max(Match.finished_at)))
    return Figures(
        queued=int(queued),
        oldest_queued_age=_age(created, moment),
        running=int(running),
        lapsed=int(lapsed),
        last_recorded_age=_age(last, moment),
        disk_free=disk_free(store.home),
    )


def disk_free(home: Path) -> int | None:
    """Free bytes (for an unprivileged user) of the filesystem that holds `home` or its nearest parent."""
    where = Path(home).resolve()
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        return shutil.disk_usage(where).free
    except OSError:
        return None


def alerts(f: Figures, limits: Thresholds) -> list[tuple[Alert, str]]:
    """The alerts `f` raises under `limits`, each with a line saying why."""
    if f.error:
        return [(Alert.STORE_UNREACHABLE, f"cannot read the store: {f.error}")]
    out: list[tuple[Alert, str]] = []
    stuck = limits.stuck_minutes * 60.0
    quiet = f.last_recorded_age is None or f.last_recorded_age > stuck
    if f.queued and f.oldest_queued_age is not None and f.oldest_queued_age > stuck and quiet:
        since = (
            "none ever recorded"
            if f.last_recorded_age is None
            else f"none recorded for {f.last_recorded_age / 60:.0f} min"
        )
        out.append(
            (
                Alert.STUCK_QUEUE,
                f"{f.queued} match(es) queued, the oldest for {f.oldest_queued_age / 60:.0f} min; "
                f"{since} (threshold {limits.stuck_minutes:g} min)",
            )
        )
    if f.lapsed:
        out.append(
            (
                Alert.WORKER_SILENT,
                f"{f.lapsed} running match(es) whose worker stopped renewing its lease over "
                f"{LAPSE_GRACE:.0f} s ago",
            )
        )
    if f.disk_free is not None and f.disk_free < limits.disk_free_min:
        out.append(
            (
                Alert.DISK_LOW,
                f"{f.disk_free >> 20} MiB free on ARENA_HOME's filesystem, under "
                f"{limits.disk_free_min >> 20} MiB",
            )
        )
    return out


class Health:
    """The store's figures, read at most once per `ttl` seconds, and the alerts they raise."""

    def __init__(
        self,
        store: Any,
        limits: Thresholds | None = None,
        ttl: float = TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.limits, self.ttl, self._clock = store, limits or Thresholds(), ttl, clock
        self._figures: Figures | None = None
        self._at = 0.0
        self._lock = threading.Lock()
        self._refreshing = False

    def figures(self) -> Figures:
        """A reading no older than `ttl` (read now, in this thread, if the last one is older)."""
        with self._lock:
            if self._figures is not None and self._clock() - self._at < self.ttl:
                return self._figures
        return self._refresh()

    def recent(self) -> Figures:
        """The last reading at once, starting a new one in the background if it is older than `ttl`;
        the first call reads in this thread. For `/healthz`: a slow store never makes it slow."""
        with self._lock:
            last, stale = self._figures, self._clock() - self._at >= self.ttl
            start = last is not None and stale and not self._refreshing
            if start:
                self._refreshing = True
        if last is None:
            return self._refresh()
        if start:
            threading.Thread(target=self._refresh, name="arena-health", daemon=True).start()
        return last

    def _refresh(self) -> Figures:
        try:
            f = read_figures(self.store)
        except Exception as exc:  # the store is away: that is itself the alert
            log.warning("health: cannot read the store: %s", exc)
            f = Figures(0, None, 0, 0, None, disk_free(self.store.home), error=type(exc).__name__)
        with self._lock:
            self._figures, self._at, self._refreshing = f, self._clock(), False
        return f

    def alerts(self, wait: bool = True) -> list[tuple[Alert, str]]:
        return alerts(self.figures() if wait else self.recent(), self.limits)


class HealthCollector:
    """The figures and alerts as Prometheus gauges, read (through `health`'s cache) when scraped."""

    def __init__(self, health: Health) -> None:
        self.health = health

    def describe(self) -> list[Any]:
        return []  # registering must not read the store

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import GaugeMetricFamily

        f = self.health.figures()
        raised = {alert for alert, _ in alerts(f, self.health.limits)}
        nan = float("nan")

        def gauge(name: str, text: str, value: float | None) -> Any:
            return GaugeMetricFamily(name, text, value=nan if value is None else float(value))

        yield gauge("arena_queue_depth", "Matches queued now.", f.queued)
        yield gauge(
            "arena_queue_oldest_seconds", "Age of the oldest queued match (NaN: none).", f.oldest_queued_age
        )
        yield gauge("arena_matches_running", "Matches being played now.", f.running)
        yield gauge(
            "arena_leases_lapsed", "Running matches whose worker stopped renewing the lease.", f.lapsed
        )
        yield gauge(
            "arena_last_recorded_seconds",
            "Seconds since the last match was recorded (NaN: never).",
            f.last_recorded_age,
        )
        yield gauge("arena_disk_free_bytes", "Free bytes on ARENA_HOME's filesystem.", f.disk_free)
        yield gauge("arena_store_up", "1 when the store answered the last reading.", 0 if f.error else 1)
        family = GaugeMetricFamily("arena_alert", "1 while the alert is raised, by alert.", labels=["alert"])
        for alert in Alert:
            family.add_metric([alert.value], 1.0 if alert in raised else 0.0)
        yield family
