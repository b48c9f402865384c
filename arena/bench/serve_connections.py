"""`arena bench serve --connections N`: what idle gRPC connections cost a real `arena serve`, and
whether it closes them.

A child `arena serve` (TCP on loopback, its own SQLite store) with `--connection-idle IDLE`. This
process opens N raw TCP connections that say the HTTP/2 preface and then nothing (a client that
holds sockets open, as a flood would). The server's RSS (VmRSS) is read idle (the same run's
baseline) and once the connections are open; then the connections it kept are counted (at most
`--max-connections`), and the time until it has closed every one of them is measured.
"""

from __future__ import annotations

import os
import socket
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.bench.child import free_port, listening, rss_kib, start, stop

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
SETTLE = 2.0  # seconds for the server to take in every connection before its RSS is read


def _still_open(conns: list[socket.socket]) -> list[socket.socket]:
    """The connections the server has not closed (EOF or reset)."""
    alive = []
    for conn in conns:
        conn.setblocking(False)
        try:
            while conn.recv(65536):  # the server's SETTINGS and pings: read and dropped
                pass
        except BlockingIOError:  # nothing more to read, and not closed
            alive.append(conn)
        except OSError:  # reset
            pass
    return alive


def run(connections: int, idle: float = 10.0, progress: Callable[[float], None] | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="arena-bench-conns-") as folder:
        tmp, port = Path(folder), free_port()
        env = {**os.environ, "ARENA_HOME": folder, "ARENA_DATABASE_URL": f"sqlite:///{tmp / 'arena.db'}"}
        args = ["serve", "--unix", "", "--tcp", f"127.0.0.1:{port}", "--replays", str(tmp / "replays"),
                "--connection-idle", str(idle)]  # fmt: skip
        proc = start(args, tmp, env, listening(port), wait=60)
        conns: list[socket.socket] = []
        try:
            time.sleep(SETTLE)
            rss_idle = rss_kib(proc.pid)
            for n in range(connections):
                conn = socket.create_connection(("127.0.0.1", port), timeout=10)
                conn.sendall(PREFACE)
                conns.append(conn)
                if progress is not None and n % 500 == 0:
                    progress(0.5 * n / connections)
            opened = time.monotonic()
            time.sleep(SETTLE)
            rss_open = rss_kib(proc.pid)
            kept = len(_still_open(conns))
            left = kept
            while left and time.monotonic() - opened < idle * 3 + 30:
                time.sleep(0.25)
                left = len(_still_open(conns))
            closed_after = time.monotonic() - opened
            if progress is not None:
                progress(1.0)
        finally:
            for conn in conns:
                conn.close()
            stop(proc)
    growth = (rss_open - rss_idle) / 1024
    return {
        "connections": connections,
        "idle_seconds": idle,
        "rss_idle_mib": round(rss_idle / 1024, 1),
        "rss_open_mib": round(rss_open / 1024, 1),
        "growth_mib": round(growth, 1),
        "kib_per_kept_connection": round(growth * 1024 / kept, 1) if kept else None,
        "kept": kept,
        "left_open": left,
        "all_closed_after_seconds": round(closed_after, 1),
        "met": left == 0,
    }
