"""Rate limits: a token bucket per (who, budget), shared by the gRPC service and the web of a process,
and by every replica when they share a Redis (`shared`: `arena.access.shared_state`).

Each owner token has its own buckets; calls without a token count against the caller's address, so a
flood from one address cannot starve the others. Over the limit a call is refused with the seconds
until it would pass (gRPC RESOURCE_EXHAUSTED, HTTP 429 with Retry-After). The figures are in
docs/security.md; an organiser can change them with `Budget` values passed to `RateLimiter`.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena import metrics

if TYPE_CHECKING:
    from arena.access.shared_state import SharedState

log = logging.getLogger("arena.access")


@dataclass(frozen=True)
class Budget:
    """`count` events per `per` seconds, refilled smoothly; a burst of up to `count` is allowed."""

    count: int
    per: float

    @property
    def rate(self) -> float:
        return self.count / self.per


DEFAULT_BUDGETS: dict[str, Budget] = {
    "call": Budget(240, 60.0),  # any call by an owner or the admin, per minute
    "anonymous": Budget(120, 60.0),  # any call without a token, per caller address, per minute
    "upload": Budget(20, 3600.0),  # uploads per owner per hour, charged before the body is read
    "challenge": Budget(30, 3600.0),  # challenges per owner per hour
    "login": Budget(10, 60.0),  # web log-in attempts per address per minute (token guessing)
    "analyse": Budget(10, 3600.0),  # solver analyses of a match (web button) per owner per hour
}


class RateLimited(Exception):
    def __init__(self, budget: str, retry_after: float) -> None:
        self.budget = budget
        self.retry_after = max(1, math.ceil(retry_after))
        super().__init__(f"rate limit: too many {budget} requests; retry in {self.retry_after} s")


class RateLimiter:
    """Thread-safe token buckets, in this process's memory or, with `shared`, in Redis (one atomic
    script per hit, so replicas never overspend a bucket between them). `clock` is injectable so
    tests can step the memory buckets' time without sleeping; Redis's buckets use Redis's clock."""

    MAX_KEYS = 100_000  # forget the idlest buckets past this, so address floods cannot grow memory

    def __init__(
        self,
        budgets: dict[str, Budget] | None = None,
        clock: Callable[[], float] = time.monotonic,
        shared: SharedState | None = None,
    ) -> None:
        self.budgets = {**DEFAULT_BUDGETS, **(budgets or {})}
        self.shared = shared
        self._clock = clock
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str], tuple[float, float]] = {}  # -> (tokens, last time)
        self._lost = False  # the shared state did not answer the last hit

    def _shared_lost(self, exc: Exception) -> None:
        """Redis away: each replica limits alone (its own buckets, the same budgets) until it answers."""
        if not self._lost:
            self._lost = True
            log.warning(
                "rate limits: the shared state %s does not answer (%s); this process limits alone meanwhile",
                self.shared.url if self.shared is not None else "",
                exc,
            )

    def hit(self, budget: str, key: str, cost: float = 1.0) -> None:
        """Spend `cost` from `key`'s `budget` bucket, or raise RateLimited."""
        b = self.budgets[budget]
        if self.shared is not None:
            try:
                wait = self.shared.take(budget, key, b.count, b.rate, cost)
            except Exception as exc:  # Redis away: this process's buckets meanwhile
                self._shared_lost(exc)
            else:
                if self._lost:
                    self._lost = False
                    log.warning("rate limits are shared again in %s", self.shared.url)
                if wait > 0:
                    metrics.rate_limited(budget, self.budgets)
                    raise RateLimited(budget, wait)
                return
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.get((budget, key), (float(b.count), now))
            tokens = min(float(b.count), tokens + (now - last) * b.rate)
            if tokens < cost:
                self._buckets[(budget, key)] = (tokens, now)
                metrics.rate_limited(budget, self.budgets)
                raise RateLimited(budget, (cost - tokens) / b.rate)
            self._buckets[(budget, key)] = (tokens - cost, now)
            if len(self._buckets) > self.MAX_KEYS:
                self._prune(now)

    def _prune(self, now: float) -> None:
        full = [k for k, (_, last) in self._buckets.items() if now - last > self.budgets[k[0]].per]
        for k in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[k]
