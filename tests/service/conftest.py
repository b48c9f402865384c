"""A real `Arena` gRPC service on a loopback port, over a real store (SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from service_support import ADMIN, Running, serve_in_thread

from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import RateLimiter
from arena.service.core import Service


@pytest.fixture
def arena_service(store, tmp_path) -> Iterator[Running]:
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=RateLimiter(), launcher="bwrap")
    tokens = {name: add_owner(store, name) for name in ("alice", "bob")}
    address, stop, thread = serve_in_thread(service)
    try:
        yield Running(service, address, tokens)
    finally:
        stop.set()
        thread.join(10)
