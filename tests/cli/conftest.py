"""The remote CLI tests' server: a real Arena gRPC service on loopback with owners alice and bob."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from remote_support import Server
from service_support import ADMIN, serve_in_thread

from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import RateLimiter
from arena.service.core import Service
from arena.store import Store


@pytest.fixture
def server(tmp_path) -> Iterator[Server]:
    home = tmp_path / "server"
    home.mkdir()
    url = f"sqlite:///{home / 'arena.db'}"
    store = Store.open(url, home=home)
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=RateLimiter(), launcher="bwrap")
    tokens = {name: add_owner(store, name) for name in ("alice", "bob")}
    client_home = tmp_path / "client"
    client_home.mkdir()
    address, stop, thread = serve_in_thread(service)
    try:
        yield Server(service, address, url, tokens, client_home)
    finally:
        stop.set()
        thread.join(10)
        store.close()
    assert not (client_home / "arena.db").exists(), "a remote command opened a local store"
