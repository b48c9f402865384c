"""`arena bench serve`: does a long-running `arena serve` hold on to finished matches?

A real `arena serve` runs as a child process (its own SQLite store, replays folder and admin token,
TCP on loopback). This process plays N short matches through it: `CreateMatch`, then both seats
over the Referee `Play` stream with the first legal card, `CONCURRENT` matches at a time. The
server's resident memory (VmRSS of its process, from /proc) is read before the first match, after
the first `baseline` matches (the same run's baseline: caches, pools and allocator arenas warmed
up), every `every` matches for the peak, and after the last one. Target: the final RSS within 10%
of the baseline, after 20,000 matches (a server that remembered each match grew ~11 KB per match).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from arena.bench.child import free_port, listening, rss_kib, start, stop
from arena.proto import arena_pb2, arena_pb2_grpc
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg

TARGET = 1.10  # final RSS at most 10% above the baseline
CONCURRENT = 8
RULES = ["max_deals=1"]


async def _seat(stub: pbg.RefereeStub, token: str) -> None:
    """One seat: Join, then the first legal card on every turn, until the MatchResult."""
    queue: asyncio.Queue[pb.BotMessage | None] = asyncio.Queue()
    await queue.put(pb.BotMessage(join=pb.Join(token=token, bot_name="bench")))

    async def outgoing():
        while (message := await queue.get()) is not None:
            yield message

    call = stub.Play(outgoing())
    async for message in call:
        kind = message.WhichOneof("msg")
        if kind == "turn_request":
            turn = message.turn_request
            await queue.put(pb.BotMessage(action=pb.Action(turn_id=turn.turn_id, card=turn.legal_cards[0])))
        elif kind == "match_result":
            break
    await queue.put(None)


async def _play(address: str, auth: tuple, matches: int, on_done: Callable[[int], None]) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        api, referee = arena_pb2_grpc.ArenaStub(channel), pbg.RefereeStub(channel)
        done = 0
        next_id = 0
        lock = asyncio.Lock()

        async def worker() -> None:
            nonlocal done, next_id
            while True:
                async with lock:
                    if next_id >= matches:
                        return
                    next_id += 1
                created = await api.CreateMatch(arena_pb2.CreateMatchRequest(rules=RULES), metadata=auth)
                await asyncio.gather(*(_seat(referee, t) for t in created.tokens))
                await api.GetMatch(
                    arena_pb2.GetMatchRequest(match_id=created.match_id, wait=True), metadata=auth
                )
                done += 1
                on_done(done)

        await asyncio.gather(*(worker() for _ in range(CONCURRENT)))


def _start_server(tmp: Path, port: int, token_file: Path) -> subprocess.Popen:
    env = {**os.environ, "ARENA_HOME": str(tmp), "ARENA_DATABASE_URL": f"sqlite:///{tmp / 'arena.db'}"}
    args = ["serve", "--unix", "", "--tcp", f"127.0.0.1:{port}", "--admin-token-file", str(token_file),
            "--replays", str(tmp / "replays")]  # fmt: skip
    return start(args, tmp, env, listening(port), wait=60)


def run(matches: int = 20_000, baseline: int = 1000, every: int = 500,
        progress: Callable[[float], None] | None = None) -> dict:  # fmt: skip
    """Play `matches` matches through a child `arena serve`; RSS before, at the baseline, peak, after."""
    baseline = min(baseline, matches)
    with tempfile.TemporaryDirectory(prefix="arena-bench-serve-") as folder:
        tmp = Path(folder)
        token = secrets.token_urlsafe(24)
        token_file = tmp / "admin-token"
        token_file.write_text(token)
        token_file.chmod(0o600)
        port = free_port()
        proc = _start_server(tmp, port, token_file)
        try:
            auth = (("authorization", f"Bearer {token}"),)
            before = rss_kib(proc.pid)
            samples: dict[int, int] = {}

            def on_done(n: int) -> None:
                if n == baseline or n % every == 0 or n == matches:
                    samples[n] = rss_kib(proc.pid)
                if progress:
                    progress(n / matches)

            started = time.monotonic()
            asyncio.run(_play(f"127.0.0.1:{port}", auth, matches, on_done))
            elapsed = time.monotonic() - started
            time.sleep(0.5)  # the last matches' summaries are written after their results
            after = rss_kib(proc.pid)
            replays = len(list((tmp / "replays").glob("*.replay")))
        finally:
            stop(proc)
    base = samples.get(baseline, after)
    peak = max([before, after, *samples.values()])
    growth = after / base
    return {
        "matches": matches,
        "baseline_matches": baseline,
        "rss_before_mib": round(before / 1024, 1),
        "rss_baseline_mib": round(base / 1024, 1),
        "rss_peak_mib": round(peak / 1024, 1),
        "rss_after_mib": round(after / 1024, 1),
        "growth": round(growth, 3),
        "target": TARGET,
        "met": growth <= TARGET,
        "replays_written": replays,
        "matches_per_second": round(matches / elapsed, 1),
        "samples_mib": {n: round(v / 1024, 1) for n, v in sorted(samples.items())},
    }
