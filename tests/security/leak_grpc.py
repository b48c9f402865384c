"""The gRPC half of the leak crawl: the real `Arena` service (arena/service) over the leak test's store on
a loopback port, and every read call it offers, made once per match, bot and season.

Each answer (or error) becomes a `Page` whose body is the message's wire bytes and its text form, so
the same scanner judges it as any web page.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
from google.protobuf import text_format
from leak_crawl import Fetch, Identity, Page

from arena.access.admin import AdminToken
from arena.access.ratelimit import Budget, RateLimiter
from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc as pbg
from arena.service.core import Service
from arena.service.grpc_servicer import ArenaService, add_arena_service
from arena.store import Store

WATCH_SECONDS = 0.3  # how long one WatchMatch is read (a running match streams until it ends)
BAD_CODES = (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DATA_LOSS)


@contextmanager
def arena_service(store: Store, admin: str) -> Iterator[str]:
    """The Arena service on 127.0.0.1 (its own event loop in a thread); yields the address. The crawl
    makes thousands of calls, so its rate limits are raised (the limits have their own tests)."""
    plenty = {name: Budget(10**6, 60.0) for name in ("call", "anonymous")}
    service = Service(store=store, admin=AdminToken.of(admin), limiter=RateLimiter(plenty), launcher="bwrap")
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, str] = {}

    async def main() -> None:
        server = grpc.aio.server()
        add_arena_service(ArenaService(service), server)
        box["address"] = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        await server.start()
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0.5)

    thread = threading.Thread(target=asyncio.run, args=(main(),), name="leak-arena-service", daemon=True)
    thread.start()
    assert ready.wait(30), "the Arena service did not start"
    try:
        yield box["address"]
    finally:
        stop.set()
        thread.join(10)


def _body(msgs: list[Any], error: grpc.RpcError | None) -> bytes:
    parts = [
        m.SerializeToString() + b"\n" + text_format.MessageToString(m, as_utf8=True).encode() for m in msgs
    ]
    if error is not None:
        parts.append(f"{error.code().name}: {error.details()}".encode())
    return b"\n".join(parts)


class GrpcCrawl:
    """Every read call of the Arena service, as one identity (its owner token is an `elf_` API token)."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = pbg.ArenaStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def _call(
        self, label: str, fn: Callable[..., Any], request: Any, identity: Identity, stream: bool
    ) -> Page:
        meta = [("authorization", f"Bearer {identity.token}")] if identity.token else []
        msgs: list[Any] = []
        error: grpc.RpcError | None = None
        status = 200
        try:
            if stream:
                call = fn(request, metadata=meta, timeout=WATCH_SECONDS)
                try:
                    for msg in call:
                        msgs.append(msg)
                except grpc.RpcError as exc:
                    if exc.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                        raise
            else:
                msgs.append(fn(request, metadata=meta, timeout=30))
        except grpc.RpcError as exc:
            error = exc
            status = 500 if exc.code() in BAD_CODES else 400
        return Page("RPC", label, status, _body(msgs, error), "application/grpc")

    def _fetch(self, label: str, fn: Any, request: Any, identity: Identity, stream: bool = False) -> Fetch:
        return lambda: self._call(f"grpc:{label}", fn, request, identity, stream)

    def global_calls(self, identity: Identity, bots: list[str], seasons: list[str]) -> list[Fetch]:
        """The list and bot calls."""
        s = self.stub
        calls = [
            self._fetch("ListSeasons", s.ListSeasons, pb.ListSeasonsRequest(), identity),
            self._fetch("ListBots", s.ListBots, pb.ListBotsRequest(include_retired=True), identity),
            self._fetch("ListMatches", s.ListMatches, pb.ListMatchesRequest(limit=500), identity),
        ]
        for status in ("queued", "running", "done"):
            calls.append(self._fetch(f"ListMatches?status={status}", s.ListMatches,
                                     pb.ListMatchesRequest(status=status), identity))  # fmt: skip
        for season in seasons:
            calls.append(self._fetch(f"GetStandings?season={season}", s.GetStandings,
                                     pb.GetStandingsRequest(season=season), identity))  # fmt: skip
            calls.append(self._fetch(f"ListMatches?season={season}", s.ListMatches,
                                     pb.ListMatchesRequest(season=season), identity))  # fmt: skip
        for bot in bots:
            calls.append(self._fetch(f"GetBot/{bot}", s.GetBot, pb.GetBotRequest(name=bot), identity))
            calls.append(
                self._fetch(f"GetBotLogs/{bot}", s.GetBotLogs, pb.GetBotLogsRequest(name=bot), identity)
            )
            calls.append(
                self._fetch(f"ListMatches?bot={bot}", s.ListMatches, pb.ListMatchesRequest(bot=bot), identity)
            )
        return calls

    def logs_calls(self, identity: Identity, bots: list[str]) -> list[Fetch]:
        """Each bot's logs (its owner's and the admin's only)."""
        req = pb.GetBotLogsRequest
        return [self._fetch(f"GetBotLogs/{b}", self.stub.GetBotLogs, req(name=b), identity) for b in bots]

    def match_calls(self, identity: Identity, mid: int) -> list[Fetch]:
        """The calls about one match: its public and private replay, and watching it."""
        s = self.stub
        return [
            self._fetch(f"GetReplay/matches/{mid}", s.GetReplay, pb.GetReplayRequest(match_id=mid), identity),
            self._fetch(
                f"GetReplay/matches/{mid}?private=1",
                s.GetReplay,
                pb.GetReplayRequest(match_id=mid, private=True),
                identity,
            ),  # fmt: skip
            self._fetch(
                f"WatchMatch/matches/{mid}", s.WatchMatch, pb.WatchMatchRequest(match_id=mid), identity, True
            ),
        ]
