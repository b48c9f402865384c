"""Helpers of the abuse tests of builds and uploads (issue #31): one `Service` served over real gRPC
and over HTTP (the web app under uvicorn), as `arena serve --web` serves it, and uploads a test can
hold half way through their body."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc

from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import Budget, RateLimiter
from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc
from arena.service.core import Service
from arena.store import Store

from service_support import ADMIN, Running, serve_in_thread  # isort: skip

OWNERS = tuple(f"owner{i}" for i in range(8))
BIG = Budget(10**9, 1.0)


def open_limits() -> RateLimiter:
    """Every rate limit lifted: the tests count the bounds of this issue, not the call budgets."""
    return RateLimiter({name: BIG for name in ("call", "anonymous", "upload", "challenge", "login")})


@dataclass
class Both:
    grpc: Running
    http: str  # http://127.0.0.1:PORT

    @property
    def service(self) -> Service:
        return self.grpc.service

    def stub(self) -> arena_pb2_grpc.ArenaStub:
        return self.grpc.stub()

    def auth(self, owner: str) -> list[tuple[str, str]]:
        return Running.auth(self.grpc.tokens[owner] if owner != "admin" else ADMIN)


@contextmanager
def both_served(home: Path) -> Iterator[Both]:
    """A SQLite store in `home` with the owners OWNERS, its `Service` (builds with the local
    launcher, so a build may wait for a test's gate file) on a gRPC port and an HTTP port."""
    import uvicorn

    from arena.web.app import create_app
    from arena.web.tokens import OwnerTokens

    url = f"sqlite:///{home / 'arena.db'}"
    store = Store.open(url, home=home)
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=open_limits(), launcher="local")
    tokens = {name: add_owner(store, name) for name in OWNERS}
    address, stop, thread = serve_in_thread(service)
    app = create_app(url, home, service=service, tokens=OwnerTokens(b"abuse-tests"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    web_thread = threading.Thread(target=web.run, kwargs={"sockets": [sock]}, daemon=True)
    web_thread.start()
    until(lambda: web.started, "uvicorn did not start")
    try:
        yield Both(Running(service, address, tokens), f"http://127.0.0.1:{sock.getsockname()[1]}")
    finally:
        web.should_exit = True
        web_thread.join(10)
        sock.close()
        stop.set()
        thread.join(10)
        store.close()


def until(check: Callable[[], object], what: str, limit: float = 60.0) -> None:
    """Wait for `check()` to hold (a state the server reaches, not a duration); fail naming `what`."""
    end = time.monotonic() + limit
    while not check():
        if time.monotonic() > end:
            raise AssertionError(what)
        time.sleep(0.02)


class Held:
    """A SubmitBot request stream that sends its header and `first` bytes of the archive, then waits
    until released before the rest: while held, the server can have read only what came so far.
    With `first` at least the archive's length it sends it all at once."""

    def __init__(self, name: str, data: bytes, first: int = 1024, size: int = 0, owner: str = "") -> None:
        self.name, self.data, self.first, self.size, self.owner = name, data, first, size, owner
        self.release = threading.Event()
        self.sent = 0  # bytes of the archive handed to gRPC

    def __iter__(self) -> Iterator[pb.SubmitBotChunk]:
        yield pb.SubmitBotChunk(
            header=pb.SubmitBotHeader(name=self.name, format="tar.gz", size=self.size, owner=self.owner)
        )
        self.sent = min(self.first, len(self.data))
        yield pb.SubmitBotChunk(data=self.data[: self.first])
        if self.first < len(self.data):
            self.release.wait(120)
        for i in range(self.first, len(self.data), 64 * 1024):
            self.sent = min(len(self.data), i + 64 * 1024)
            yield pb.SubmitBotChunk(data=self.data[i : i + 64 * 1024])


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def code_of(future: grpc.Future) -> grpc.StatusCode:
    try:
        future.result()
    except grpc.RpcError as exc:
        return exc.code()
    except grpc.FutureCancelledError:  # cancelled by the test itself
        return grpc.StatusCode.CANCELLED
    return grpc.StatusCode.OK
