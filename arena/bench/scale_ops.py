"""What `arena bench scale` times: every public page, JSON route, gRPC read and CLI listing, named
against one store's sample (a bot, a revealed match, a sealed one), and the counting harness.

Statements per request are counted in the bench's own process, never in the servers: a SQLAlchemy
`before_cursor_execute` listener on every engine of this process, around the same request made to
the same code in-process (the web app through Starlette's test client and the CLI through click's
runner, both given by `arena.cli.bench_scale`; the gRPC operations through `arena.service`'s
functions with a Service of their own). The timed
servers run unchanged, so nothing they serve carries a count (docs/security.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from sqlalchemy import Engine, event, func, select

from arena.store.hints import likely
from arena.store.models import Match


class Kind(StrEnum):
    PAGE = "page"
    JSON = "json"
    GRPC = "grpc"
    CLI = "cli"
    LADDER = "ladder"


#: The kinds a spectator reaches over the network: the per-request targets apply to them.
SERVED = (Kind.PAGE, Kind.JSON, Kind.GRPC)


@dataclass(frozen=True)
class Counters:
    """The in-process twins of the web's and the CLI's requests, which live above the bench's layer
    (`arena.cli.bench_scale` gives them): each returns {op name: statements of one request}."""

    web: Callable[[Statements, str, str, list[Op]], dict[str, int | None]]
    cli: Callable[[Statements, dict[str, str], list[Op]], dict[str, int | None]]


@dataclass(frozen=True)
class Sample:
    """What the requests name in one store."""

    season: str
    bot: str
    revealed: int  # a finished match whose twin is finished too
    sealed: int  # a finished match whose twin is still queued
    deep_after: int  # a page token near the end of the finished history (the 101st oldest finished match)


@dataclass(frozen=True)
class Op:
    name: str
    kind: Kind
    target: str  # URL path (page, json), method name (grpc), arguments after `arena` (cli), step (ladder)
    match_page: bool = False  # a match page's first view (the 200 KB target)


def sample_of(store: Any, season: str, bot: str) -> Sample:
    """The sample of a built store: the oldest finished pair's first match, the newest sealed one."""
    with store.read() as s:
        revealed = s.scalar(select(func.min(Match.id)).where(Match.status == "done")) or 1
        twin = Match.__table__.alias("twin")
        sealed = s.scalar(
            select(func.max(Match.id)).where(
                Match.status == "done",
                select(twin.c.id)
                .where(twin.c.pair == Match.pair, twin.c.id != Match.id, twin.c.status == "queued")
                .exists(),
            )
        )
        done = likely(Match.status == "done")
        deep = s.scalar(select(Match.id).where(done).order_by(Match.id).offset(100).limit(1))
    return Sample(season, bot, revealed, sealed or revealed, deep or revealed + 1)


def web_ops(x: Sample) -> list[Op]:
    api = "/api"
    return [
        Op("standings page /", Kind.PAGE, "/"),
        Op("bot page /bots/NAME", Kind.PAGE, f"/bots/{x.bot}"),
        Op("matches page /matches", Kind.PAGE, "/matches"),
        Op("matches page, one bot", Kind.PAGE, f"/matches?bot={x.bot}"),
        Op("matches page, last page", Kind.PAGE, f"/matches?after={x.deep_after}"),
        Op("match page (revealed)", Kind.PAGE, f"/matches/{x.revealed}", match_page=True),
        Op("match page (sealed)", Kind.PAGE, f"/matches/{x.sealed}", match_page=True),
        Op("replay.json download", Kind.PAGE, f"/matches/{x.revealed}/replay.json"),
        Op("GET /api/seasons", Kind.JSON, f"{api}/seasons"),
        Op("GET /api/standings", Kind.JSON, f"{api}/standings"),
        Op("GET /api/bots", Kind.JSON, f"{api}/bots"),
        Op("GET /api/bots/NAME", Kind.JSON, f"{api}/bots/{x.bot}"),
        Op("GET /api/matches", Kind.JSON, f"{api}/matches"),
        Op("GET /api/matches?bot=NAME", Kind.JSON, f"{api}/matches?bot={x.bot}"),
        Op("GET /api/matches?after=deep", Kind.JSON, f"{api}/matches?after={x.deep_after}"),
        Op("GET /api/matches?verdict=TIMEOUT", Kind.JSON, f"{api}/matches?verdict=TIMEOUT"),  # a rare one
        Op("GET /api/matches/ID", Kind.JSON, f"{api}/matches/{x.revealed}"),
        Op("GET /api/matches/ID/record", Kind.JSON, f"{api}/matches/{x.revealed}/record"),
        Op("GET /api/matches/ID/record.bin", Kind.JSON, f"{api}/matches/{x.revealed}/record.bin"),
        Op("GET /api/matches/ID/timeline", Kind.JSON, f"{api}/matches/{x.revealed}/timeline"),
    ]


def grpc_ops() -> list[Op]:
    return [Op(f"gRPC {m}", Kind.GRPC, m) for m in
            ("ListSeasons", "GetStandings", "ListBots", "GetBot", "ListMatches", "ListMatches(bot)", "GetReplay")]  # fmt: skip


def grpc_request(method: str, x: Sample) -> tuple[str, Any]:
    """(the stub's method, the request) of a gRPC op."""
    from arena.proto import arena_pb2 as pb

    requests: dict[str, tuple[str, Any]] = {
        "ListSeasons": ("ListSeasons", pb.ListSeasonsRequest()),
        "GetStandings": ("GetStandings", pb.GetStandingsRequest(season=x.season)),
        "ListBots": ("ListBots", pb.ListBotsRequest()),
        "GetBot": ("GetBot", pb.GetBotRequest(name=x.bot)),
        "ListMatches": ("ListMatches", pb.ListMatchesRequest(season=x.season)),
        "ListMatches(bot)": ("ListMatches", pb.ListMatchesRequest(bot=x.bot)),
        "GetReplay": ("GetReplay", pb.GetReplayRequest(match_id=x.revealed)),
    }
    return requests[method]


def cli_ops(x: Sample) -> list[Op]:
    return [
        Op("arena standings", Kind.CLI, f"standings {x.season}"),
        Op("arena matches", Kind.CLI, f"matches --season {x.season}"),
        Op("arena matches --bot", Kind.CLI, f"matches --bot {x.bot}"),
        Op("arena bots list", Kind.CLI, "bots list"),
    ]


class Statements:
    """Counts the SQL statements every engine of this process sends while `counting` is open, from
    any thread (the web app answers in a worker thread); one count at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._n: int | None = None  # None: not counting
        event.listen(Engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: Any) -> None:
        with self._lock:
            if self._n is not None:
                self._n += 1

    @contextmanager
    def counting(self) -> Iterator[list[int]]:
        """Yields a one-item list that holds the count once the block ends."""
        out = [0]
        with self._lock:
            self._n = 0
        try:
            yield out
        finally:
            with self._lock:
                out[0], self._n = self._n or 0, None

    def close(self) -> None:
        event.remove(Engine, "before_cursor_execute", self._seen)


def twice(statements: Statements, call: Callable[[], Any]) -> int:
    """The statements of `call`'s second run (the first warms the caches, as the timed runs are warm)."""
    call()
    with statements.counting() as n:
        call()
    return n[0]


def count_grpc(statements: Statements, url: str, home: str, x: Sample) -> dict[str, int | None]:
    """Each gRPC op's statements: the caller's resolution and the operation, as the servicer runs them."""
    from arena.service import ops_bots, ops_results
    from arena.service.core import Service
    from arena.store import Store

    store = Store.open(url, home=home)
    service = Service(store=store)
    peer = "ipv4:127.0.0.1:1"
    calls: dict[str, Callable[[], Any]] = {
        "ListSeasons": lambda: ops_results.list_seasons(service),
        "GetStandings": lambda: ops_results.get_standings(service, x.season),
        "ListBots": lambda: ops_bots.list_bots(service),
        "GetBot": lambda: ops_bots.get_bot(service, x.bot),
        "ListMatches": lambda: ops_results.list_matches(service, grpc_request("ListMatches", x)[1]),
        "ListMatches(bot)": lambda: ops_results.list_matches(service, grpc_request("ListMatches(bot)", x)[1]),
        "GetReplay": lambda: ops_results.get_replay(service, service.caller(None, peer), x.revealed),
    }
    out: dict[str, int | None] = {}
    try:
        for op in grpc_ops():
            call = calls[op.target]
            try:
                out[op.name] = twice(statements, lambda call=call: (service.caller(None, peer), call()))  # type: ignore[misc]
            except Exception:  # the timed server reports the same failure with its status
                out[op.name] = None
    finally:
        store.close()
    return out
