"""The web bounds its own connections, per address and in all, and sizes its thread pool (issue #31):
a connection over a bound is answered 503 with Retry-After and Connection: close, naming the bound,
and the other clients are served. Real uvicorn (`arena.web.server.web_server`, as `arena web` and
`arena serve --web` build it), real sockets from their own loopback addresses."""

from __future__ import annotations

import asyncio
import http.client
import socket
import time

import anyio.to_thread

from arena.web.app import create_app
from arena.web.server import WebLimits, web_server
from arena.web.tokens import OwnerTokens

A, B, C, D = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"


def connection(port: int, source: str) -> http.client.HTTPConnection:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
    conn.connect()
    return conn


def get(conn: http.client.HTTPConnection, path: str = "/healthz") -> tuple[int, dict[str, str], str]:
    conn.request("GET", path)
    answer = conn.getresponse()
    return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read().decode()


def closed_by_server(conn: http.client.HTTPConnection) -> bool:
    assert conn.sock is not None
    return conn.sock.recv(1) == b""  # blocks until the server closes it (the socket's 10 s timeout guards)


def test_connections_are_bounded_per_address_and_in_all_and_others_are_served(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path, tokens=OwnerTokens(b"connections"))
    server = web_server(
        app,
        "127.0.0.1",
        0,
        WebLimits(connections=5, per_address=2, threads=3),
        own_signals=False,
        timeout_keep_alive=1,
    )
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

    def clients() -> None:
        held = [connection(port, A), connection(port, A)]  # sending nothing: they hold their places
        until(lambda: server.connections.open == 2)
        status, headers, body = get(connection(port, A))
        assert status == 503 and headers["retry-after"] == "5" and headers["connection"] == "close"
        assert f"2 connections are open from {A}, at most 2 per address" in body
        status, headers, body = get(connection(port, A), "/api/bots")
        assert status == 503 and '"detail"' in body  # JSON under /api
        served = connection(port, B)
        assert get(served)[0] == 200  # another address is served meanwhile
        held += [connection(port, C), connection(port, C)]  # 5 of 5 in all (B's kept alive)
        until(lambda: server.connections.open == 5)
        status, headers, body = get(connection(port, D))
        assert status == 503 and "the server has 5 connections open, its limit" in body
        assert all(closed_by_server(conn) for conn in held)  # a connection that sends nothing is closed
        until(lambda: server.connections.open <= 1)
        assert get(connection(port, D))[0] == 200
        assert server.connections.refused == 3

    def threads() -> None:
        assert anyio.to_thread.current_default_thread_limiter().total_tokens == 3  # not AnyIO's 40

    serve_while(server, sock, clients, threads)


def serve_while(server, sock: socket.socket, clients, started=lambda: None) -> None:
    """Run `server` on `sock` while `clients()` runs in a thread (`started()` first, on the server's
    loop once it is up), then stop it."""

    async def main() -> None:
        serving = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        started()
        try:
            await asyncio.to_thread(clients)
        finally:
            server.should_exit = True
            await serving

    asyncio.run(main())
    sock.close()


def until(check, limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, "the server's count did not settle"
        time.sleep(0.02)


def test_the_cli_shows_the_servers_own_defaults() -> None:
    """`arena web --help` needs no web extra, so arena/cli/web.py repeats the defaults: they must agree."""
    from arena.cli import web as cli
    from arena.web import server

    assert (cli.CONNECTIONS, cli.PER_ADDRESS, cli.THREADS) == (
        server.CONNECTIONS,
        server.PER_ADDRESS,
        server.THREADS,
    )


def test_a_trusted_proxys_connections_have_no_per_address_bound_but_count_in_all(tmp_path, monkeypatch):
    """A connection from a trusted proxy (FORWARDED_ALLOW_IPS, read by uvicorn's Config as `arena web`
    builds it) carries many clients: three from it pass a bound of one per address, and still count
    towards the server's bound in all."""
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", A)
    app = create_app(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path, tokens=OwnerTokens(b"connections"))
    server = web_server(
        app, "127.0.0.1", 0, WebLimits(connections=4, per_address=1, threads=3), own_signals=False,
        timeout_keep_alive=10,
    )  # fmt: skip
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

    def clients() -> None:
        proxied = [connection(port, A) for _ in range(3)]  # silent: they hold their places
        until(lambda: server.connections.open == 3)
        assert server.connections.refused == 0  # the proxy's address is past one per address
        served = connection(port, B)
        assert get(served)[0] == 200  # B's kept alive: 4 of 4 in all
        until(lambda: server.connections.open == 4)
        status, _, body = get(connection(port, C))
        assert status == 503 and "the server has 4 connections open, its limit" in body
        for conn in [*proxied, served]:
            conn.close()

    serve_while(server, sock, clients)


def trickled_until_closed(port: int, source: str, lines: int = 200) -> bool:
    """A request whose header lines come one every 0.2 s, never ending: True once the server closes it."""
    import select

    with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0)) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n")
        for n in range(lines):
            try:
                raw.sendall(b"X-Slow-%d: x\r\n" % n)
                readable, _, _ = select.select([raw], [], [], 0.2)
                if readable and raw.recv(65536) == b"":
                    return True
            except OSError:  # reset: closed as well
                return True
    return False


def test_a_connection_that_trickles_its_headers_is_closed_and_a_whole_request_is_served(tmp_path):
    """uvicorn stops its keep-alive timer at the first byte: headers sent a line at a time kept a
    connection (and its place) for ever. Now the headers must be whole within the headers timeout."""
    app = create_app(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path, tokens=OwnerTokens(b"connections"))
    server = web_server(
        app, "127.0.0.1", 0, WebLimits(connections=5, per_address=2, threads=3), own_signals=False,
        timeout_keep_alive=1, headers_timeout=1.0,
    )  # fmt: skip
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]

    def clients() -> None:
        assert trickled_until_closed(port, A), "a connection trickling its headers was kept"
        until(lambda: server.connections.open == 0)
        with socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(A, 0)) as raw:
            raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: arena\r\n")
            time.sleep(0.3)  # headers in two pieces, whole within the timeout: served
            raw.sendall(b"Connection: close\r\n\r\n")
            assert raw.recv(65536).startswith(b"HTTP/1.1 200")

    serve_while(server, sock, clients)
