"""Token buckets: a burst up to the budget, then refusals with a retry-after, refilled as time passes."""

from __future__ import annotations

import pytest

from arena.access.ratelimit import Budget, RateLimited, RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_refusal_then_refill() -> None:
    clock = Clock()
    limiter = RateLimiter({"upload": Budget(3, 60.0)}, clock=clock)
    for _ in range(3):
        limiter.hit("upload", "owner:a")
    with pytest.raises(RateLimited) as err:
        limiter.hit("upload", "owner:a")
    assert err.value.retry_after == 20 and "upload" in str(err.value)
    limiter.hit("upload", "owner:b")  # another key has its own bucket
    clock.now += 20.0
    limiter.hit("upload", "owner:a")
    with pytest.raises(RateLimited):
        limiter.hit("upload", "owner:a")


def test_many_keys_do_not_grow_memory_without_bound() -> None:
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    limiter.MAX_KEYS = 1000
    for i in range(5000):
        limiter.hit("anonymous", f"addr:{i}")
        clock.now += 0.001
    assert len(limiter._buckets) <= 1001
