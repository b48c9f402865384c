"""The callers of `arena bench serve --load`: spectators, owners and one hostile owner, all real clients
over loopback (HTTP through httpx, gRPC through grpc.aio) against a real `arena serve`.

Each call is timed and sorted into one of three outcomes:
- **ok**: the answer a well-behaved caller expects;
- **refused**: a proper refusal (HTTP 4xx, a 503 with Retry-After: the web's bound on connections, or
  a gRPC status that names the caller's mistake or its limit: RESOURCE_EXHAUSTED, PERMISSION_DENIED,
  UNAUTHENTICATED, ...). Only the hostile owner and the
  token guesser expect these; for anyone else a refusal is counted as an error;
- **error**: anything else (HTTP 5xx, a dropped connection, a deadline passed, gRPC UNAVAILABLE,
  INTERNAL, UNKNOWN, DEADLINE_EXCEEDED). The target is none at all.

Spectators each come from their own loopback address (127.0.0.x), as spectators from different
machines would, so that they do not share one address's anonymous budget: over HTTP bound with
httpx's `local_address`, over gRPC (whose client cannot choose its source address) through a
loopback forwarder per address (`child.Sources`). The hostile owner's guesses come from
addresses of its own.

The callers are one asyncio loop, so anything slow and synchronous in it delays every call in
flight and is counted as the server's latency. So the loop does nothing blocking: every HTTP
transport shares one TLS context (`loopback_transport`; httpx otherwise builds one per client,
loading the CA bundle: about 23 ms of CPU each, 27 of them at the start of the load, measured
to hold the loop for over a second), and the store is read for the running matches off the
loop (`asyncio.to_thread`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import ssl
import statistics
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import grpc
import httpx

from arena.bench.child import Sources
from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc
from arena.proto import referee_pb2 as rpb

DEADLINE = 10.0  # seconds: a call still unanswered by then is an error
#: A live stream's httpx timeouts: none between reads (a quiet match sends nothing for a while);
#: `_sse` bounds the wait for the first byte (DEADLINE) and the reading after it itself.
STREAM_TIMEOUT = httpx.Timeout(DEADLINE, read=None)
SLOW_BUILD = 30  # seconds the hostile owner's builds sleep
UPLOADS_AT_ONCE = 6  # the hostile owner's concurrent uploads
HOSTILE_GRPC = "127.0.2.3"  # the hostile owner's gRPC calls come from here
REFUSALS = {  # statuses that answer a caller's own mistake or limit: never the server's failure
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.ALREADY_EXISTS,
}


class Outcome(StrEnum):
    OK = "ok"
    REFUSED = "refused"
    ERROR = "error"


class Role(StrEnum):
    SPECTATOR = "spectator"
    OWNER = "owner"
    HOSTILE = "hostile"


@dataclass
class CallStats:
    """What one kind of call (by one role) got during the loaded phase."""

    latencies_ms: list[float] = field(default_factory=list)
    outcomes: dict[Outcome, int] = field(default_factory=lambda: dict.fromkeys(Outcome, 0))
    examples: list[str] = field(default_factory=list)  # the first few errors, for the report

    def summary(self) -> dict[str, Any]:
        ms = sorted(self.latencies_ms)
        return {
            "calls": len(ms),
            "p50_ms": round(statistics.median(ms), 1) if ms else None,
            "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1) if ms else None,
            **{o.value: n for o, n in self.outcomes.items()},
            "error_examples": self.examples,
        }


class Tally:
    """Every call's outcome and latency, by (role, call), and how late the callers' own loop ran."""

    def __init__(self) -> None:
        self.calls: dict[tuple[Role, str], CallStats] = {}
        self.loop_lag_ms: list[float] = []  # how much later than asked each of `lag_watch`'s wake-ups came

    def add(self, role: Role, call: str, outcome: Outcome, ms: float, why: str = "") -> None:
        stats = self.calls.setdefault((role, call), CallStats())
        stats.latencies_ms.append(ms)
        stats.outcomes[outcome] += 1
        if outcome is Outcome.ERROR and len(stats.examples) < 3:
            stats.examples.append(why[:200])

    def errors(self) -> int:
        return sum(s.outcomes[Outcome.ERROR] for s in self.calls.values())

    def public_reads_p99(self) -> float | None:
        ms = sorted(
            x for (role, _), s in self.calls.items() if role is Role.SPECTATOR for x in s.latencies_ms
        )
        return round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1) if ms else None

    def loop_lag(self) -> dict[str, float | None]:
        """p50, p99 and the worst of the callers' loop lag: a part of every latency above that is the
        bench's own, not the server's (a call answered while the loop was busy is read that late)."""
        ms = sorted(self.loop_lag_ms)
        if not ms:
            return {"p50_ms": None, "p99_ms": None, "max_ms": None}
        return {
            "p50_ms": round(statistics.median(ms), 1),
            "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1),
            "max_ms": round(ms[-1], 1),
        }

    def report(self) -> dict[str, dict[str, Any]]:
        return {f"{role.value} {call}": s.summary() for (role, call), s in sorted(self.calls.items())}


@dataclass
class Target:
    """Where the callers aim: the server's addresses and what the set-up made for them."""

    grpc_address: str
    web_url: str
    bots: list[str]  # every bot in the season
    owners: dict[str, tuple[str, str]]  # owner name -> (token, its bot)
    hostile: tuple[str, str]  # (token, its bot)
    upload: bytes  # a small bot archive (tar.gz) an owner may submit
    slow_upload: bytes  # an archive whose build step sleeps
    running: Callable[[], list[int]]  # ids of the matches playing now


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every caller (they speak plain HTTP to loopback; httpx wants one anyway)."""
    return httpx.create_ssl_context()


def loopback_transport(local_address: str) -> httpx.AsyncHTTPTransport:
    """An HTTP transport whose connections come from `local_address`, on the shared TLS context."""
    return httpx.AsyncHTTPTransport(local_address=local_address, verify=_tls())


def http_outcome(answer: httpx.Response) -> Outcome:
    """A 4xx, or a 503 with Retry-After (over the web's connection bounds), is a refusal; else an error."""
    if answer.status_code < 500 or (answer.status_code == 503 and "retry-after" in answer.headers):
        return Outcome.REFUSED
    return Outcome.ERROR


async def timed(
    tally: Tally,
    role: Role,
    call: str,
    work: Awaitable[Any],
    expect_refusal: bool = False,
    deadline: float = DEADLINE,
) -> Any:
    """Run one call; sort its outcome into `tally`. Returns its answer, or None when it failed."""
    started = time.perf_counter()
    outcome, why, answer = Outcome.OK, "", None
    try:
        answer = await asyncio.wait_for(work, deadline)
        if isinstance(answer, httpx.Response) and answer.status_code >= 400:
            outcome = http_outcome(answer)
            why = f"HTTP {answer.status_code}: {answer.text[:120]}"
    except grpc.aio.AioRpcError as exc:
        outcome = Outcome.REFUSED if exc.code() in REFUSALS else Outcome.ERROR
        why = f"{exc.code().name}: {exc.details()}"
    except (TimeoutError, httpx.HTTPError, OSError) as exc:
        outcome, why = Outcome.ERROR, f"{type(exc).__name__}: {exc}"
    if outcome is Outcome.REFUSED and not expect_refusal:
        outcome = Outcome.ERROR
    tally.add(role, call, outcome, (time.perf_counter() - started) * 1000, why)
    return answer if outcome is Outcome.OK else None


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def _until(stop: float, pace: float, steps: Iterable[Callable[[], Awaitable[Any]]]) -> None:
    """Cycle through `steps`, one every `pace` seconds, until the monotonic clock reaches `stop`."""
    chain = list(steps)
    i = 0
    while time.monotonic() < stop:
        began = time.monotonic()
        await chain[i % len(chain)]()
        i += 1
        await asyncio.sleep(max(0.0, pace - (time.monotonic() - began)))


async def spectator(t: Target, tally: Tally, index: int, stop: float, api: Any) -> None:
    """A person reading the site: pages and JSON at about one a second, a live board now and then,
    and some gRPC reads (paced well inside 127.0.0.1's anonymous budget, shared by all of them)."""
    transport = loopback_transport(spectator_address(index))
    async with httpx.AsyncClient(base_url=t.web_url, transport=transport, timeout=DEADLINE) as web:
        rng = random.Random(index)
        S = Role.SPECTATOR

        def get(path: str) -> Callable[[], Awaitable[Any]]:
            return lambda: timed(tally, S, f"GET {path.split('?')[0]}", web.get(path))

        async def bot_page() -> None:
            name = rng.choice(t.bots)
            await timed(tally, S, "GET /bots/NAME", web.get(f"/bots/{name}"))

        async def watch_live() -> None:
            running = await asyncio.to_thread(t.running)
            if running:
                await _sse(web, tally, S, rng.choice(running), seconds=3.0)

        async def grpc_read() -> None:  # from this spectator's own address, through its forwarder
            call = rng.choice(["ListBots", "GetStandings", "ListMatches", "ListSeasons"])
            request = {
                "ListBots": pb.ListBotsRequest(),
                "GetStandings": pb.GetStandingsRequest(),
                "ListMatches": pb.ListMatchesRequest(),
                "ListSeasons": pb.ListSeasonsRequest(),
            }[call]
            await timed(tally, S, f"gRPC {call}", getattr(api, call)(request, timeout=DEADLINE))

        steps = [get("/"), get("/matches"), get("/api/standings"), bot_page, get("/api/matches?limit=20"),
                 grpc_read, get("/api/seasons"), watch_live, get("/healthz")]  # fmt: skip
        rng.shuffle(steps)
        await _until(stop, 1.0, steps)


async def _sse(web: httpx.AsyncClient, tally: Tally, role: Role, match_id: int, seconds: float) -> int:
    """Follow a match's live events for `seconds` (or until it ends); counts the time to the first
    byte, which the server sends at once (a `retry:` line). After it, a quiet stream is no error: a
    match whose bot is thinking sends nothing until its move (a ping every 15 s), as a browser sees,
    so the stream is read for `seconds` of wall time, not until some read takes DEADLINE."""
    started = time.perf_counter()
    frames = 0
    call = "SSE /api/matches/ID/events"
    try:
        async with asyncio.timeout(DEADLINE) as limit:  # to the first byte
            async with web.stream("GET", f"/api/matches/{match_id}/events", timeout=STREAM_TIMEOUT) as answer:
                if answer.status_code != 200:
                    outcome = http_outcome(answer)
                    if role is not Role.HOSTILE:
                        outcome = Outcome.ERROR
                    tally.add(
                        role,
                        call,
                        outcome,
                        (time.perf_counter() - started) * 1000,
                        f"HTTP {answer.status_code}",
                    )
                    return 0
                chunks = answer.aiter_bytes()
                frames = (await anext(chunks)).count(b"\n\n")
                tally.add(role, call, Outcome.OK, (time.perf_counter() - started) * 1000)
                limit.reschedule(None)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(seconds):
                        async for chunk in chunks:
                            frames += chunk.count(b"\n\n")
    except (TimeoutError, StopAsyncIteration, httpx.HTTPError, OSError) as exc:
        tally.add(
            role, call, Outcome.ERROR, (time.perf_counter() - started) * 1000, f"{type(exc).__name__}: {exc}"
        )
    return frames


async def owner(t: Target, tally: Tally, name: str, stop: float, api: Any, index: int) -> None:
    """A bot author at work: their bot, its logs and matches, one upload and one challenge."""
    token, bot = t.owners[name]
    auth = _auth(token)
    local = f"127.0.1.{10 + index}"
    transport = loopback_transport(local)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(
        base_url=t.web_url, transport=transport, timeout=DEADLINE, headers=headers
    ) as web:
        OWN = Role.OWNER
        rng = random.Random(1000 + index)
        done = {"upload": False, "challenge": False}

        async def upload() -> None:
            if not done["upload"]:
                done["upload"] = True
                await timed(
                    tally,
                    OWN,
                    "gRPC SubmitBot",
                    api.SubmitBot(_chunks(bot, t.upload), metadata=auth, timeout=60),
                )

        async def challenge() -> None:
            if not done["challenge"]:
                done["challenge"] = True
                opponent = rng.choice([b for b in t.bots if b != bot])
                request = pb.ChallengeRequest(my_bot=bot, opponent=opponent, deals=2)
                await timed(
                    tally, OWN, "gRPC Challenge", api.Challenge(request, metadata=auth, timeout=DEADLINE)
                )

        steps = [
            lambda: timed(tally, OWN, "gRPC GetBot", api.GetBot(pb.GetBotRequest(name=bot), metadata=auth, timeout=DEADLINE)),
            lambda: timed(tally, OWN, "gRPC GetBotLogs",
                          api.GetBotLogs(pb.GetBotLogsRequest(name=bot, limit=5), metadata=auth, timeout=DEADLINE)),
            upload,
            lambda: timed(tally, OWN, "GET /api/me", web.get("/api/me")),
            lambda: timed(tally, OWN, "GET /api/bots/NAME/private-logs", web.get(f"/api/bots/{bot}/private-logs")),
            challenge,
            lambda: timed(tally, OWN, "GET /api/matches?bot=", web.get(f"/api/matches?bot={bot}&limit=20")),
        ]  # fmt: skip
        await _until(stop, 1.0, steps)


def _chunks(name: str, archive: bytes, owner: str = "") -> Any:
    async def gen() -> Any:
        yield pb.SubmitBotChunk(
            header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(archive), owner=owner)
        )
        for i in range(0, len(archive), 64 * 1024):
            yield pb.SubmitBotChunk(data=archive[i : i + 64 * 1024])

    return gen()


async def hostile(t: Target, tally: Tally, stop: float, api: Any) -> None:
    """One owner doing everything at its limits at once: uploads with sleeping builds, the longest
    challenges it may ask for, token guesses, many live streams and log reads as fast as it can.
    Its refusals are expected; an error (5xx, UNAVAILABLE, a dropped stream) is not."""
    token, bot = t.hostile
    auth = _auth(token)
    H = Role.HOSTILE

    async def flood(
        call: str, make: Callable[[], Awaitable[Any]], pace: float, deadline: float = DEADLINE
    ) -> None:
        while time.monotonic() < stop:
            await timed(tally, H, call, make(), expect_refusal=True, deadline=deadline)
            await asyncio.sleep(pace)

    def slow_upload() -> Awaitable[Any]:  # its build sleeps SLOW_BUILD s: the answer comes after it
        return api.SubmitBot(_chunks(bot, t.slow_upload), metadata=auth, timeout=SLOW_BUILD + 60)

    def longest_challenge() -> Awaitable[Any]:
        opponent = next(b for b in t.bots if b != bot)
        request = pb.ChallengeRequest(my_bot=bot, opponent=opponent, deals=200,
                                      time_control=rpb.TimeControl(move_ms=60_000, bank_ms=3_600_000))  # fmt: skip
        return api.Challenge(request, metadata=auth, timeout=DEADLINE)

    async def streams() -> None:
        transport = loopback_transport("127.0.2.1")
        async with httpx.AsyncClient(base_url=t.web_url, transport=transport, timeout=DEADLINE) as web:
            while time.monotonic() < stop:
                running = await asyncio.to_thread(t.running)
                if not running:
                    await asyncio.sleep(0.5)
                    continue
                left = max(0.5, stop - time.monotonic())
                await asyncio.gather(
                    *(_sse(web, tally, H, running[i % len(running)], left) for i in range(40))
                )

    async def guesses() -> None:
        transport = loopback_transport("127.0.2.2")
        async with httpx.AsyncClient(base_url=t.web_url, transport=transport, timeout=DEADLINE) as web:
            n = 0
            while time.monotonic() < stop:
                n += 1
                wrong = {"X-Owner-Token": f"elf_guess{n:08d}"}
                await timed(tally, H, "GET private-logs, wrong token",
                            web.get(f"/api/bots/{bot}/logs", headers=wrong), expect_refusal=True)  # fmt: skip
                await timed(tally, H, "gRPC GetBotLogs, wrong token",
                            api.GetBotLogs(pb.GetBotLogsRequest(name=bot), metadata=_auth(f"elf_guess{n:08d}"),
                                           timeout=DEADLINE), expect_refusal=True)  # fmt: skip
                await asyncio.sleep(0.05)

    await asyncio.gather(
        *(flood("gRPC SubmitBot (build sleeps)", slow_upload, 0.2, SLOW_BUILD + 60) for _ in range(UPLOADS_AT_ONCE)),
        flood("gRPC Challenge (longest)", longest_challenge, 0.2),
        flood("gRPC GetBotLogs", lambda: api.GetBotLogs(pb.GetBotLogsRequest(name=bot), metadata=auth,
                                                        timeout=DEADLINE), 0.02),
        streams(),
        guesses(),
    )  # fmt: skip


LAG_TICK = 0.01  # seconds between the loop-lag watch's wake-ups


async def lag_watch(tally: Tally, stop: float) -> None:
    """Sleep LAG_TICK at a time until `stop` and record how late each wake-up came: the time a call's
    answer can wait in this process before the callers read it (the loop busy, or the process
    waiting for a core)."""
    while time.monotonic() < stop:
        began = time.perf_counter()
        await asyncio.sleep(LAG_TICK)
        tally.loop_lag_ms.append(max(0.0, (time.perf_counter() - began - LAG_TICK) * 1000))


async def run_callers(t: Target, seconds: float, spectators: int, owners: int, with_hostile: bool) -> Tally:
    """Every caller at once for `seconds`; returns what they got."""
    tally = Tally()
    _tls()  # before the clock: building it holds the loop
    stop = time.monotonic() + seconds
    sources = [spectator_address(i) for i in range(spectators)] + [HOSTILE_GRPC]
    forward = Sources(t.grpc_address, sources)
    await forward.start()
    channels = {a: grpc.aio.insecure_channel(f"127.0.0.1:{forward.ports[a]}") for a in sources}
    try:
        async with grpc.aio.insecure_channel(t.grpc_address) as channel:  # owners: their tokens' budgets
            api = arena_pb2_grpc.ArenaStub(channel)
            stub = {a: arena_pb2_grpc.ArenaStub(c) for a, c in channels.items()}
            tasks = [lag_watch(tally, stop)]
            tasks += [spectator(t, tally, i, stop, stub[spectator_address(i)]) for i in range(spectators)]
            tasks += [owner(t, tally, name, stop, api, i) for i, name in enumerate(list(t.owners)[:owners])]
            if with_hostile:
                tasks.append(hostile(t, tally, stop, stub[HOSTILE_GRPC]))
            await asyncio.gather(*tasks)
    finally:
        for c in channels.values():
            await c.close()
    return tally


def spectator_address(index: int) -> str:
    """Spectator `index`'s own loopback address, for HTTP and gRPC alike."""
    return f"127.0.{index // 200}.{10 + index % 200}"
