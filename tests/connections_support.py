"""Raw TCP clients of the gRPC server that say the HTTP/2 preface and then nothing, and a bounded wait
for the server to close them (tests/referee/test_grpc_connections.py, tests/cli/test_serve_cli.py)."""

from __future__ import annotations

import select
import socket
import threading

# the HTTP/2 client preface and an empty SETTINGS frame: what a client sends before any call
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
BOUND = 30.0  # seconds a test waits for the server to act before it fails


def raw_connection(port: int) -> socket.socket:
    """A client that connects, says the HTTP/2 preface, and then nothing: an idle connection."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn.sendall(PREFACE)
    return conn


def closed(conns: list[socket.socket], within: float = BOUND) -> bool:
    """Wait until the server has closed every one of `conns` (EOF or reset), at most `within` seconds."""
    open_ = {c.fileno(): c for c in conns}
    deadline = threading.Event()
    timer = threading.Timer(within, deadline.set)
    timer.start()
    try:
        while open_ and not deadline.is_set():
            readable, _, _ = select.select(list(open_.values()), [], [], 0.2)
            for conn in readable:
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    open_.pop(conn.fileno())
    finally:
        timer.cancel()
    return not open_
