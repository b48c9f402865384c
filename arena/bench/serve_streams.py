"""`arena bench serve --streams N`: what N live spectators of a long match cost `arena serve`, and
whether it still stops on SIGTERM with them open.

A real `arena serve --web` runs as a child process over its own SQLite store, with a challenge row
claimed by a (fake) worker and that match's live file written as the worker writes it
(`arena.workers.live.LiveWriter`), `deals` whole deals long. Then N clients over real sockets watch
it, half gRPC `WatchMatch` and half the web's event stream, eight per transport from each loopback
address 127.0.0.k (the caps are per address; a gRPC client cannot pick its source address, so its
connections go through `Sources`, one loopback forwarder per address). Once every stream has caught
up with the play, one more deal is written and every stream must follow it; then SIGTERM. Reported:
the server's RSS (VmRSS from /proc) before the first stream and at its peak, the events each
stream got, and the time from SIGTERM to the exit. Target: the peak within `BOUND_MIB` of idle.
`tests/service/test_abuse_streams.py` runs the same at 128 streams of an 80-deal match.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.bench.child import Sources, free_port, rss_kib
from arena.proto import arena_pb2 as pb
from arena.workers.live import LiveWriter, live_path

BOUND_MIB = 50  # the server's RSS may grow by this much over idle, whatever the streams do
PER_ADDRESS = 8  # streams per address and transport: the server's cap (ops_watch.PER_ADDRESS)
CARDS = [f"{r}{s}" for s in "SHDC" for r in "AKQJT987"]
ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]


def write_deal(writer: LiveWriter, deal: int) -> None:
    """One whole deal of referee events (its start, 16 tricks, its end), as the worker writes them."""
    writer({"event": "deal_start", "deal": deal, "dealer": deal % 2})
    for t in range(1, 17):
        cards = CARDS[2 * t - 2 : 2 * t]
        writer({"event": "trick", "deal": deal, "trick": t, "leader": t % 2, "cards": cards, "winner": (t + deal) % 2})  # fmt: skip
    writer({"event": "deal_end", "deal": deal, "winner": deal % 2, "lines": [deal % 3, deal % 2]})


def ids_of_deals(first: int, last: int) -> list[str]:
    """The event ids (`deal.phase.trick`, as the web's stream names them) of deals `first` to `last`."""
    one = lambda d: [f"{d}.0.0", *(f"{d}.1.{t}" for t in range(1, 17)), f"{d}.2.0"]  # noqa: E731
    return [i for d in range(first, last + 1) for i in one(d)]


def event_id(ev: pb.WatchEvent) -> str:
    kind = ev.WhichOneof("event")
    part = getattr(ev, kind)
    return f"{part.deal}.{('deal', 'trick', 'deal_end').index(kind)}.{part.trick if kind == 'trick' else 0}"


def running_match(home: Path) -> tuple[int, LiveWriter]:
    """A challenge row in the SQLite store of `home`, claimed by a (fake) worker, and its live file's writer."""
    from arena.store import Store
    from arena.store.models import Match
    from arena.store.queue import claim

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


@dataclass
class Served:
    proc: subprocess.Popen[str]
    tcp: str  # HOST:PORT of gRPC
    web: tuple[str, int]  # of the web
    home: Path


@contextlib.contextmanager
def served(home: Path, *args: str) -> Iterator[Served]:
    """`arena serve` over $ARENA_HOME `home` (its SQLite store), gRPC and the web on loopback ports;
    killed at the end if it is still running. Its stderr goes to `home/serve.err`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("ARENA_ADMIN_TOKEN", "ARENA_DATABASE_URL")}
    env |= {"ARENA_HOME": str(home), "ARENA_BUNDLE_CACHE": str(home / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
    cmd = [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", "--web", f"127.0.0.1:{port}", *args]
    with open(home / "serve.err", "w") as err:
        proc = subprocess.Popen(cmd, cwd=home, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "referee listening on" in line:
                break
        else:
            raise RuntimeError(f"arena serve did not start: {(home / 'serve.err').read_text()[-2000:]}")
        threading.Thread(target=proc.stdout.read, daemon=True).start()  # a full pipe would stall it
        tcp = line.split(" on ")[1].split(" (")[0]
        asyncio.run(_web_up(port))
        yield Served(proc, tcp, ("127.0.0.1", port), home)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def _web_up(port: int) -> None:
    for _ in range(600):
        with contextlib.suppress(OSError):
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the web did not start listening within 60 s")


async def grpc_watch(address: str, match_id: int, got: list[str]) -> None:
    """A WatchMatch client: the id of each card event, then "end" once the stream ended OK."""
    import grpc

    from arena.proto.arena_pb2_grpc import ArenaStub

    async with grpc.aio.insecure_channel(address) as channel:
        async for ev in ArenaStub(channel).WatchMatch(pb.WatchMatchRequest(match_id=match_id)):
            if ev.WhichOneof("event") != "status":
                got.append(event_id(ev))
    got.append("end")


async def sse_watch(web: tuple[str, int], source: str, match_id: int, got: list[str]) -> None:
    """An event-stream client from `source` (plain HTTP/1.1 on a socket): the id of each card event,
    then "end" at the stream's end frame."""
    reader, writer = await asyncio.open_connection(*web, local_addr=(source, 0))
    writer.write(f"GET /api/matches/{match_id}/events HTTP/1.1\r\nHost: {web[0]}\r\n\r\n".encode())
    status = await reader.readline()
    if b" 200 " not in status:
        raise RuntimeError(f"the event stream from {source} was refused: {status!r}")
    while line := await reader.readline():  # chunk sizes and headers match neither prefix
        if line.startswith(b"id: "):
            got.append(line[4:].decode().strip())
        elif line.startswith(b"event: end"):
            got.append("end")
            break
    writer.close()


async def wait_for(check: Callable[[], bool], what: str, limit: float = 240.0) -> None:
    for _ in range(int(limit / 0.1)):
        if check():
            return
        await asyncio.sleep(0.1)
    raise RuntimeError(what)


class Peak:
    """A process's largest RSS (KiB) seen while it runs, sampled every 50 ms in a thread."""

    def __init__(self, pid: int) -> None:
        self.pid, self.most, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            with contextlib.suppress(OSError, RuntimeError):
                self.most = max(self.most, rss_kib(self.pid))

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(5)
        return self.most


def watch_and_stop(
    serve: Served, match_id: int, writer: LiveWriter, deals: int, streams: int
) -> dict[str, Any]:
    """Open `streams` streams (half of each transport), wait until each shows everything released,
    write deal `deals + 1` and wait until each follows it, then SIGTERM the server and wait for every
    stream to end. The ids each stream got (ending "end"), the peak RSS and the stop's seconds."""
    per_transport = (streams + 1) // 2
    sources = [f"127.0.0.{k}" for k in range(1, 1 + -(-per_transport // PER_ADDRESS))]
    seen: list[list[str]] = []
    out: dict[str, Any] = {"seen": seen}
    peak = Peak(serve.proc.pid)

    async def main() -> None:
        forward = Sources(serve.tcp, sources)
        await forward.start()
        tasks = []
        for n in range(streams):
            got: list[str] = []
            seen.append(got)
            source = sources[(n // 2) // PER_ADDRESS]
            if n % 2 == 0:
                client = grpc_watch(f"127.0.0.1:{forward.ports[source]}", match_id, got)
            else:
                client = sse_watch(serve.web, source, match_id, got)
            tasks.append(asyncio.ensure_future(client))
        await wait_for(lambda: all(g and g[-1] == f"{deals}.1.15" for g in seen), "a stream fell short")
        write_deal(writer, deals + 1)  # the match goes on: every stream follows it
        await wait_for(lambda: all(g[-1] == f"{deals + 1}.1.15" for g in seen), "a stream missed news")
        started = time.monotonic()
        serve.proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(asyncio.gather(*tasks), 60)  # each stream ends, by itself
        out["exit_code"] = await asyncio.to_thread(serve.proc.wait, 30)
        out["stop_seconds"] = round(time.monotonic() - started, 2)

    asyncio.run(main())
    out["peak_kib"] = peak.stop()
    return out


def run(
    streams: int = 128, deals: int = 80, progress: Callable[[float], None] | None = None
) -> dict[str, Any]:
    """The whole bench in a temporary $ARENA_HOME: the server's RSS idle and at the peak, and its stop."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-streams-") as folder:
        home = Path(folder)
        match_id, writer = running_match(home)
        for deal in range(1, deals + 1):
            write_deal(writer, deal)
        with served(home, "--workers", "0") as serve:
            idle = rss_kib(serve.proc.pid)
            if progress:
                progress(0.1)
            r = watch_and_stop(serve, match_id, writer, deals, streams)
    growth = (r["peak_kib"] - idle) / 1024
    got = [len(g) - 1 for g in r["seen"]]
    return {
        "streams": streams,
        "deals": deals,
        "events_per_stream_min": min(got),
        "events_per_stream_max": max(got),
        "rss_idle_mib": round(idle / 1024, 1),
        "rss_peak_mib": round(r["peak_kib"] / 1024, 1),
        "growth_mib": round(growth, 1),
        "bound_mib": BOUND_MIB,
        "met": growth <= BOUND_MIB,
        "stop_seconds": r["stop_seconds"],
        "exit_code": r["exit_code"],
    }
