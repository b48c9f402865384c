"""`arena.memo.Memo`: the least recently used answer goes first, a failure is not remembered, and
threads computing at once all get the answer."""

from __future__ import annotations

import threading

import pytest

from arena.memo import Memo


def test_the_least_recently_used_goes_first() -> None:
    memo: Memo[str, int] = Memo(2)
    made: list[str] = []

    def make(key: str, value: int):
        return lambda: made.append(key) or value

    assert memo.get("a", make("a", 1)) == 1
    assert memo.get("b", make("b", 2)) == 2
    assert memo.get("a", make("a", 99)) == 1  # a hit: not computed again, and now the newest
    assert memo.get("c", make("c", 3)) == 3  # evicts b, the least recently used
    assert len(memo) == 2
    assert memo.get("a", make("a", 99)) == 1
    assert memo.get("b", make("b", 20)) == 20  # b was forgotten: computed again
    assert made == ["a", "b", "c", "b"]


def test_a_failure_is_not_remembered() -> None:
    memo: Memo[str, int] = Memo(4)

    def boom() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError):
        memo.get("k", boom)
    assert len(memo) == 0
    assert memo.get("k", lambda: 5) == 5


def test_threads_at_once_all_get_the_answer() -> None:
    memo: Memo[int, int] = Memo(8)
    results: list[int] = []
    barrier = threading.Barrier(8)

    def work() -> None:
        barrier.wait()
        results.append(memo.get(7, lambda: 49))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [49] * 8 and len(memo) == 1
