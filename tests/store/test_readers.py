"""Spectators read while a season writes: Store.read never takes the write lock, on either database."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from arena.store.models import Bot


@pytest.mark.timeout(30)  # a reader that queued for the write lock would wait for the 60 s busy timeout
def test_reader_is_not_blocked_by_an_open_write_transaction(store) -> None:
    store.add_version("alpha", "ann", content_hash="a" * 64, path="/nowhere")
    with store.tx() as writer:  # holds the write lock (BEGIN IMMEDIATE on SQLite) until the block ends
        writer.add(Bot(name="beta", owner="bob"))
        writer.flush()
        with store.read() as reader:
            names = list(reader.scalars(select(Bot.name).order_by(Bot.name)))
        assert names == ["alpha"]  # the reader sees committed data only, and did not wait
    with store.read() as reader:
        assert list(reader.scalars(select(Bot.name).order_by(Bot.name))) == ["alpha", "beta"]


def test_writes_in_a_read_session_are_rolled_back(store) -> None:
    with store.read() as reader:
        reader.add(Bot(name="ghost", owner="nobody"))
        reader.flush()
    with store.read() as reader:
        assert reader.scalar(select(Bot).where(Bot.name == "ghost")) is None
