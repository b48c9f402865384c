"""The web app under uvicorn, with the arena's own bounds on connections and threads (`arena web`
and `arena serve --web` build their server here).

- **Connections**: at most `WebLimits.connections` open at once, and `per_address` from one client
  address. A connection over either bound is still read, and its first request is answered 503 with
  `Retry-After` and `Connection: close`, naming the bound; it never reaches the app and holds no
  place. HTTP/1.1 carries one request at a time per connection, so this bounds requests in flight
  too. The addresses uvicorn trusts as proxies (`FORWARDED_ALLOW_IPS`, default loopback) count in
  all but have no per-address bound: behind a proxy, the proxy's own limits are the per-client
  bound, and the rate limits see the forwarded address.
- **A connection that sends nothing** is closed after the keep-alive timeout (5 s), as an idle
  kept-alive one is, so held-open sockets do not keep their places.
- **A request's headers** must all arrive within `HEADERS_TIMEOUT` (30 s, HAProxy's `timeout
  http-request` in deploy/haproxy/arena.cfg) of the connection's start or of its last response: uvicorn
  stops the keep-alive timer at the first byte and has no header timeout of its own, so a client that
  trickles a header line every few seconds would otherwise keep its place for ever.
- **Threads**: the sync routes (database reads, page rendering) run on AnyIO's thread pool, sized
  here to `WebLimits.threads` instead of AnyIO's 40; a request over it waits for a thread.
- uvicorn's own `limit_concurrency` (a plain 503) and the listen backlog are backstops above these.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import uvicorn
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from arena.access.forwarded import trusted_hosts
from arena.access.slots import Full, Slots

log = logging.getLogger("arena.web")

CONNECTIONS = 512  # open at once, in all: 128 live streams, and room for pages and calls
PER_ADDRESS = 32  # open at once from one address: its 8 live streams and a browser's connections
THREADS = 32  # sync routes at once; the store's pool has 15 connections for them anyway
RETRY_AFTER = 5  # seconds a refused client is told to wait
HEADERS_TIMEOUT = 30.0  # seconds for a request's headers, from the connection or the last response


@dataclass(frozen=True)
class WebLimits:
    """`--web-connections`, `--web-connections-per-address`, `--web-threads`."""

    connections: int = CONNECTIONS
    per_address: int = PER_ADDRESS
    threads: int = THREADS


class Connections(Slots):
    """Open connections, in all and per address; `admit` takes a place or says why not."""

    def __init__(self, limits: WebLimits, trusted: Callable[[str], bool] = lambda host: False) -> None:
        super().__init__(limits.connections, limits.per_address, trusted)
        self.limits = limits

    @property
    def open(self) -> int:
        """The connections open now."""
        return self.held

    def admit(self, host: str) -> str | None:
        full = self.take(host)
        if full is Full.ADDRESS:
            return (
                f"{self.by_address[host]} connections are open from {host}, at most {self.per_address} "
                f"per address; close some or retry after {RETRY_AFTER} s"
            )
        if full is Full.ALL:
            return f"the server has {self.held} connections open, its limit; retry after {RETRY_AFTER} s"
        return None

    def release(self, host: str) -> None:
        self.give_back(host)


def refusal(message: str) -> ASGIApp:
    """The answer to a request over a bound: 503, Retry-After, Connection: close."""
    headers = {"Retry-After": str(RETRY_AFTER), "Connection": "close"}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if str(scope.get("path", "")).startswith("/api"):
            answer: ASGIApp = JSONResponse({"detail": message}, status_code=503, headers=headers)
        else:
            answer = PlainTextResponse(message, status_code=503, headers=headers)
        await answer(scope, receive, send)

    return app


def capped_protocol(connections: Connections, headers_timeout: float = HEADERS_TIMEOUT) -> type[H11Protocol]:
    """uvicorn's HTTP/1.1 protocol, counting its connections in `connections`, and closing one whose
    request's headers take longer than `headers_timeout`."""

    class Capped(H11Protocol):
        counted: str | None = None
        headers_task: asyncio.TimerHandle | None = None

        def await_headers(self) -> None:
            if self.headers_task is not None:
                self.headers_task.cancel()
            self.headers_task = self.loop.call_later(headers_timeout, self.headers_late)

        def headers_late(self) -> None:
            self.headers_task = None
            between_requests = self.cycle is None or self.cycle.response_complete
            if between_requests and not self.transport.is_closing():
                self.transport.close()  # no whole request since the last answer: a trickle

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self.await_headers()

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            host = self.client[0] if self.client else ""
            why = connections.admit(host)
            if why is None:
                self.counted = host
            else:
                self.app = refusal(why)
            # a connection that sends no request is closed like an idle kept-alive one
            self.timeout_keep_alive_task = self.loop.call_later(
                self.timeout_keep_alive, self.timeout_keep_alive_handler
            )
            self.await_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            if self.headers_task is not None:
                self.headers_task.cancel()
            if self.counted is not None:
                connections.release(self.counted)
                self.counted = None
            super().connection_lost(exc)

    return Capped


class WebServer(uvicorn.Server):
    """A uvicorn server that sizes AnyIO's thread pool on its loop before serving; with
    `own_signals` False it leaves SIGINT/SIGTERM to whoever runs the loop (`arena serve`)."""

    def __init__(
        self, config: uvicorn.Config, limits: WebLimits, connections: Connections, own_signals: bool
    ):
        super().__init__(config)
        self.limits, self.connections, self.own_signals = limits, connections, own_signals

    async def serve(self, sockets: Any = None) -> None:
        anyio.to_thread.current_default_thread_limiter().total_tokens = self.limits.threads
        await super().serve(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if self.own_signals:
            with super().capture_signals():
                yield
        else:
            yield  # the referee's loop owns SIGINT/SIGTERM


def web_server(
    app: ASGIApp,
    host: str,
    port: int,
    limits: WebLimits = WebLimits(),
    *,
    ssl_certfile: str | None = None,
    ssl_keyfile: str | None = None,
    own_signals: bool = True,
    timeout_keep_alive: int = 5,
    headers_timeout: float = HEADERS_TIMEOUT,
) -> WebServer:
    """The uvicorn server of `app` on HOST:PORT under `limits` (not started)."""
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        ssl_certfile=ssl_certfile,
        ssl_keyfile=ssl_keyfile,
        timeout_keep_alive=timeout_keep_alive,
        limit_concurrency=2 * limits.connections,  # backstop: refused connections are counted by uvicorn too
        backlog=limits.connections,
    )
    connections = Connections(limits, trusted_hosts(config.forwarded_allow_ips))
    config.http = capped_protocol(connections, headers_timeout)
    return WebServer(config, limits, connections, own_signals)
