"""The benches' child servers: a real `arena serve` or `arena web` as a process of its own, started
on loopback ports, waited for, read for its memory, and stopped.

Its output goes to a log file in its home, never a pipe: a pipe nobody reads would stall the server
once full, and the file is what a failed start quotes. `Sources` makes callers on one machine look
like callers from many addresses, so per-address budgets apply as they would to separate hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ARENA = [sys.executable, "-m", "arena.cli"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid: int) -> int:
    """The resident memory of process `pid` (VmRSS from /proc), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def listening(port: int) -> Callable[[], bool]:
    """A readiness check: something accepts connections on 127.0.0.1:`port`."""

    def check() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) == 0

    return check


def start(
    args: list[str],
    home: Path,
    env: dict[str, str],
    ready: Callable[[], bool],
    name: str = "serve",
    wait: float = 120.0,
    session: bool = False,
) -> subprocess.Popen:
    """`arena ARGS` in `home` with `env`, its output in `home/NAME.log`; returns once `ready()` holds,
    or raises RuntimeError quoting the log's end when it exits first or `wait` seconds pass. With
    `session`, the child is a session of its own, as a service is (Linux's autogroup scheduling,
    on by default, then shares the cores between it and the bench as between two programs, instead
    of counting them as one)."""
    log = home / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*ARENA, *args],
            env=env,
            cwd=home,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=session,
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"arena {name} exited: {log.read_text(errors='replace')[-800:]}")
        if ready():
            return proc
        time.sleep(0.1)
    stop(proc)
    raise RuntimeError(
        f"arena {name} was not ready within {wait:.0f} s: {log.read_text(errors='replace')[-800:]}"
    )


def stop(proc: subprocess.Popen, grace: float = 30.0) -> None:
    """SIGTERM, then SIGKILL if it is still running after `grace` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class Sources:
    """Loopback listeners that forward to `target`, each from its own source address: the server sees
    as many callers as there are sources, as it would see hosts."""

    def __init__(self, target: str, sources: list[str]) -> None:
        host, _, port = target.rpartition(":")
        self.target, self.sources = (host, int(port)), sources
        self.ports: dict[str, int] = {}

    async def start(self) -> None:
        for source in self.sources:
            server = await asyncio.start_server(functools.partial(self._pipe, source), "127.0.0.1", 0)
            self.ports[source] = server.sockets[0].getsockname()[1]

    async def _pipe(self, source: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target, local_addr=(source, 0))

        async def copy(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await r.read(65536):
                    w.write(data)
                    await w.drain()
            w.close()

        await asyncio.gather(copy(reader, up_writer), copy(up_reader, writer))
