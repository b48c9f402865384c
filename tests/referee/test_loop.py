"""The shared referee loop: calls from threads, and cleanup when a caller gives up (Ctrl-C, timeout)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from arena.referee.loop import referee_loop, run_sync


def test_one_loop_serves_many_threads():
    async def which():
        await asyncio.sleep(0.01)
        return id(asyncio.get_running_loop())

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        loops = set(pool.map(lambda _: run_sync(which()), range(8)))
    assert loops == {id(referee_loop())}


def test_a_caller_that_gives_up_cancels_and_cleans_up():
    cleaned = threading.Event()

    async def long_match():
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.set()  # play_match kills its bots here

    with pytest.raises(concurrent.futures.TimeoutError):
        run_sync(long_match(), timeout=0.2)
    assert cleaned.wait(5)
