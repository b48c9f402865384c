"""Helpers of the stream-abuse tests (tests/service/test_abuse_streams.py): a real `arena serve` process
over a SQLite store, a match's live file written as the worker writes it, clients of `WatchMatch` and
of the web's event stream from chosen loopback addresses, and the server's RSS read from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import httpx

from arena.proto import arena_pb2 as pb
from arena.proto.arena_pb2_grpc import ArenaStub
from arena.store import Store
from arena.store.models import Match
from arena.store.queue import claim
from arena.workers.live import LiveWriter, live_path

ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
REPO = Path(__file__).resolve().parents[2]
SOURCES = [f"127.0.0.{k}" for k in range(1, 9)]  # eight client addresses: the caps are per address
CARDS = [f"{r}{s}" for s in "SHDC" for r in "AKQJT987"]


def rss(pid: int) -> int:
    """The process's resident set in bytes (VmRSS of /proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def write_deal(writer: LiveWriter, deal: int) -> None:
    """One whole deal of referee events (its start, 16 tricks, its end), as the worker writes them."""
    writer({"event": "deal_start", "deal": deal, "dealer": deal % 2})
    for t in range(1, 17):
        cards = CARDS[2 * t - 2 : 2 * t]
        writer(
            {
                "event": "trick",
                "deal": deal,
                "trick": t,
                "leader": t % 2,
                "cards": cards,
                "winner": (t + deal) % 2,
            }
        )
    writer({"event": "deal_end", "deal": deal, "winner": deal % 2, "lines": [deal % 3, deal % 2]})


def ids_of_deals(first: int, last: int) -> list[str]:
    """The ids (`deal.phase.trick`) of every event of deals `first` to `last`."""
    return [
        i
        for d in range(first, last + 1)
        for i in (f"{d}.0.0", *(f"{d}.1.{t}" for t in range(1, 17)), f"{d}.2.0")
    ]


@dataclass
class Serve:
    proc: subprocess.Popen[str]
    tcp: str
    web: str
    home: Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def arena_serve(home: Path, *args: str) -> Iterator[Serve]:
    """`arena serve` over $ARENA_HOME `home` (its SQLite store), gRPC and the web on loopback ports."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_ADMIN_TOKEN", "ARENA_DATABASE_URL")}
    env |= {"ARENA_HOME": str(home), "PYTHONPATH": str(REPO), "ARENA_BUNDLE_CACHE": str(home / "cache")}
    cmd = [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", "--web", f"127.0.0.1:{port}", *args]
    err = open(home / "serve.err", "w")  # noqa: SIM115 - read by the test once it exited
    proc = subprocess.Popen(cmd, cwd=home, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "referee listening on" in line:
                break
        else:
            raise AssertionError(f"arena serve did not start: {(home / 'serve.err').read_text()}")
        tcp = line.split(" on ")[1].split(" (")[0]
        until(lambda: httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200, "no web")
        yield Serve(proc, tcp, f"http://127.0.0.1:{port}", home)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        err.close()


def until(check: Callable[[], Any], what: str, limit: int = 600) -> None:
    for _ in range(limit):
        with contextlib.suppress(httpx.HTTPError):
            if check():
                return
        time.sleep(0.1)
    raise AssertionError(what)


class Sources:
    """Loopback listeners that forward to the server, each from its own source address: the server sees
    eight callers, as it would see eight hosts (a gRPC client cannot pick its source address)."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self.target = (host, int(port))
        self.ports: dict[str, int] = {}

    async def start(self) -> None:
        for source in SOURCES:
            server = await asyncio.start_server(
                lambda r, w, s=source: self._pipe(s, r, w), "127.0.0.1", 0
            )  # fmt: skip
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


def event_id(ev: pb.WatchEvent) -> str:
    kind = ev.WhichOneof("event")
    part = getattr(ev, kind)
    return f"{part.deal}.{('deal', 'trick', 'deal_end').index(kind)}.{part.trick if kind == 'trick' else 0}"


async def grpc_watch(address: str, match_id: int, got: list[str]) -> None:
    """A WatchMatch client: the id of each card event, then "end" once the stream ended OK."""
    async with grpc.aio.insecure_channel(address) as channel:
        async for ev in ArenaStub(channel).WatchMatch(pb.WatchMatchRequest(match_id=match_id)):
            if ev.WhichOneof("event") != "status":
                got.append(event_id(ev))
    got.append("end")


async def sse_watch(base: str, source: str, match_id: int, got: list[str]) -> None:
    """An event-stream client from `source`: the id of each card event, then "end" at its end frame."""
    transport = httpx.AsyncHTTPTransport(local_address=source)
    async with httpx.AsyncClient(transport=transport, timeout=None) as client:
        async with client.stream("GET", f"{base}/api/matches/{match_id}/events") as r:
            assert r.status_code == 200, await r.aread()
            async for line in r.aiter_lines():
                if line.startswith("id: "):
                    got.append(line[4:])
                elif line == "event: end":
                    got.append("end")


async def wait_for(check: Callable[[], bool], what: str, limit: float = 240.0) -> None:
    for _ in range(int(limit / 0.1)):
        if check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(what)


class Peak:
    """The server's largest RSS seen while it runs (sampled every 50 ms in a thread)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.most, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(OSError, AssertionError):
                self.most = max(self.most, rss(self.pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(5)
        return self.most


def running_match(home: Path) -> tuple[int, LiveWriter]:
    """A challenge row claimed by a (fake) worker, and its live file's writer."""
    store = Store.open(f"sqlite:///{home / 'arena.db'}", home=home)
    try:
        a = store.add_version("ta", "oa", content_hash="h-ta", path="/nonexistent/ta").version
        b = store.add_version("tb", "ob", content_hash="h-tb", path="/nonexistent/tb").version
        with store.tx() as s:
            row = Match(kind="challenge", version0_id=a.id, version1_id=b.id, seed=7)
            s.add(row)
            s.flush()
            match_id = row.id
        with store.tx() as s:
            claimed = claim(s, "fake-worker", ids=[match_id])
            assert claimed is not None
            attempt = claimed.attempts
    finally:
        store.close()
    return match_id, LiveWriter(live_path(home, match_id), attempt)
