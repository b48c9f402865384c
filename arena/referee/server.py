"""The gRPC referee server (grpc.aio): seat streams, tokens, health, reflection, shutdown.

One `RefereeServer` listens on a Unix socket and/or TCP and hosts any number of matches; each match
is a `MatchRunner` whose seat tokens are registered here. `arena serve` adds the management API
(arena.proto); `arena play` and the workers run one match per server on a fresh Unix socket.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from arena.proto import referee_pb2, referee_pb2_grpc
from arena.proto.lenient import Undecodable
from arena.proto.protocol import PROTOCOL_VERSION
from arena.referee.claims import JoinRefused, check_claim
from arena.referee.connections import ConnectionLimits
from arena.referee.handles import BotHandle
from arena.referee.joining import RETRY_AFTER, Joining, Place
from arena.referee.match import MatchRunner
from arena.referee.session import Seat
from arena.referee.spec import MatchSpec

if TYPE_CHECKING:
    from arena.access.admin import AdminToken

# The management API, health and reflection are imported by RefereeServer alone: `arena play` and the
# workers import this module only for the seat servicer (botsocket.py), and skip them (issue #18).

MAX_BOT_MESSAGE = 16 * 1024  # bytes: a bot's messages are tiny; anything bigger is a PROTOCOL_ERROR
# gRPC's own receive limit, kept well above MAX_BOT_MESSAGE so that oversize messages reach
# _parse_bot_message and end as PROTOCOL_ERROR. A message over this one is refused inside gRPC's
# core: the referee's stream then just ends (EOF, then a cancellation), exactly as when the bot
# cancels its call, so it can only be judged DISCONNECT or CRASH. It also bounds what one stream
# can make the referee buffer (gRPC holds a whole message before handing it over).
GRPC_RECEIVE_CAP = 4 * 1024 * 1024
MAX_REFEREE_MESSAGE = 4 * 1024 * 1024


class BadBotMessage(Undecodable):
    """Bytes the referee does not take as a BotMessage: over the cap, or not a BotMessage at all.
    The deserializer returns this instead of raising (gRPC would answer a raise with UNKNOWN)."""

    def __init__(self, reason: str) -> None:
        super().__init__(referee_pb2.BotMessage.DESCRIPTOR.full_name)
        self.reason = reason


def _parse_bot_message(data: bytes) -> referee_pb2.BotMessage | BadBotMessage:
    """Our own size cap, checked here so the seat's reader sees it as a protocol violation."""
    if len(data) > MAX_BOT_MESSAGE:
        return BadBotMessage(
            f"an oversized message: a message of {len(data)} bytes; the cap is {MAX_BOT_MESSAGE} bytes"
        )
    try:
        return referee_pb2.BotMessage.FromString(data)
    except Exception:  # DecodeError, and whatever a hostile encoding raises
        return BadBotMessage(f"{len(data)} bytes that do not parse as a BotMessage")


SPENT_TOKENS = 4096  # finished matches' tokens remembered (2 per match) for the "match is over" answer
log = logging.getLogger(__name__)
JOIN_TIMEOUT = 30.0  # a stream that sends nothing is dropped after this long (a counted one: joining.py)
MAX_OPEN_MATCHES = 1000  # matches created and not yet over (`arena serve --max-open-matches`)
KEEP_FINISHED = 1000  # finished matches GetMatch still answers from memory (small summaries only)


@dataclass(frozen=True)
class Finished:
    """What a server keeps of a match once it is over: its result, and where its record went. The
    match's state (engine, seats, record) is released; the record is read back from `replay` when
    asked for, or kept here compressed when the server writes no files (`record`)."""

    match_id: str
    result: Any  # referee_pb2.MatchResult
    replay: Path | None = None
    record: bytes = b""
    error: str = ""  # why the record could not be written: GetMatch answers DATA_LOSS with it


class TooManyMatches(Exception):
    """CreateMatch beyond the server's limit of open matches (RESOURCE_EXHAUSTED)."""


REFEREE_SERVICE = referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name


class RefereeServicer(referee_pb2_grpc.RefereeServicer):
    """The `Play` stream: the Join first, checked by `claim` (a server's own rule for which tokens it
    takes), then the seat's messages until its match is over."""

    def __init__(
        self,
        claim: Callable[[referee_pb2.Join], tuple[MatchRunner, Seat]],
        receive_cap: int = GRPC_RECEIVE_CAP,
        joining: Joining | None = None,
    ) -> None:
        self._claim = claim
        self._receive_cap = receive_cap  # gRPC's receive limit on this server, named in DISCONNECT details
        self._joining = joining  # streams not joined yet, bounded (arena serve); None: unbounded

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
        place = Place(self._joining, context.peer() or "")
        refusal = place.take()
        if refusal is not None:
            context.set_trailing_metadata((("retry-after", str(RETRY_AFTER)),))
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
        try:
            await self._play(context, place)
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception:  # a referee bug: a named status for the bot, the traceback once in the log
            log.exception("Play from %s failed inside the referee", context.peer())
            await context.abort(
                grpc.StatusCode.INTERNAL, "the referee failed on this stream; its log has the details"
            )
        finally:
            place.give_back()

    async def _play(self, context: grpc.aio.ServicerContext, place: Place) -> None:
        wait = place.gate.silent_timeout if place.gate is not None else JOIN_TIMEOUT
        try:
            async with asyncio.timeout(wait):
                first = await context.read()
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"no Join within {wait:g} s")
        if first is grpc.aio.EOF:
            return
        if isinstance(first, BadBotMessage):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the first message is {first.reason}; send BotMessage{{join}} with your ARENA_TOKEN first",
            )
        if first.WhichOneof("msg") != "join":
            got = first.WhichOneof("msg") or "an empty message"
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"the first message must be Join (with your ARENA_TOKEN), got {got}",
            )
        try:
            runner, seat = self._claim(first.join)
        except JoinRefused as exc:
            await context.abort(getattr(grpc.StatusCode, exc.code), exc.message)
        place.give_back()  # a seat now: bounded by the matches open (--max-open-matches)
        seat.receive_cap = self._receive_cap
        runner.streams.attach(seat, context, first.join)
        reader = asyncio.ensure_future(runner.streams.read_loop(seat, context))
        try:
            await seat.finished.wait()
        finally:
            if not seat.finished.is_set():  # the client went away (cancelled RPC)
                await runner.streams.stream_gone(seat, reader)
            reader.cancel()
        if seat.end_status is not None and not seat.gone:  # how the match ended for this seat
            code, details = seat.end_status
            if code != "OK":
                await context.abort(grpc.StatusCode[code], details)


def play_handlers(servicer: RefereeServicer) -> grpc.GenericRpcHandler:
    """The Referee service's one method, with the referee's own message parser (the 16 KiB cap)."""
    play = grpc.stream_stream_rpc_method_handler(
        servicer.Play,
        request_deserializer=_parse_bot_message,
        response_serializer=referee_pb2.RefereeMessage.SerializeToString,
    )
    return grpc.method_handlers_generic_handler(REFEREE_SERVICE, {"Play": play})


def check_version(seat: Seat, join: referee_pb2.Join) -> None:
    version = join.protocol_version or PROTOCOL_VERSION
    if version != PROTOCOL_VERSION:
        seat.join_error = (
            f"protocol_version {version} is not supported (this referee speaks {PROTOCOL_VERSION})"
        )
        raise JoinRefused("FAILED_PRECONDITION", seat.join_error)


class RefereeServer:
    """A grpc.aio server hosting matches. Create and use it inside one running event loop."""

    def __init__(
        self,
        *,
        unix_path: str | Path | None = None,
        tcp: str | None = None,
        management: bool = False,
        on_finished: Callable[[MatchRunner], Path | None] | None = None,
        admin_token: AdminToken | None = None,
        services: Callable[[grpc.aio.Server], None] | None = None,
        tcp_credentials: grpc.ServerCredentials | None = None,
        max_open: int = MAX_OPEN_MATCHES,
        keep_finished: int = KEEP_FINISHED,
        interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
        joining: Joining | None = None,
        connections: ConnectionLimits | None = None,
    ) -> None:
        if unix_path is None and tcp is None:
            raise ValueError("RefereeServer needs a unix_path, a tcp address, or both")
        self.unix_path = Path(unix_path) if unix_path is not None else None
        self.tcp = tcp
        self.tcp_port: int | None = None
        self.management = management
        self.admin_token = admin_token  # what the management calls need (None: they refuse)
        # called for matches started with start_match(), once each is over: writes its record and
        # returns the path (or None: the record is then kept here, compressed); raising means the
        # record is lost, which the server logs and GetMatch reports
        self.on_finished = on_finished
        self.services = services  # registers the Arena service instead of add_management (arena serve)
        self.tcp_credentials = tcp_credentials  # TLS on the TCP listener (the Unix socket stays local)
        self.interceptors = tuple(interceptors)  # around every call (arena serve: calls in flight)
        self.joining = joining  # Play streams not joined yet, bounded (arena serve); None: unbounded
        self.connections = connections or ConnectionLimits()  # idle, connections per listener, streams
        self.runners: dict[str, MatchRunner] = {}  # open matches only: released once recorded
        self.finished: OrderedDict[str, Finished] = OrderedDict()  # the newest `keep_finished`
        self.max_open, self.keep_finished = max_open, keep_finished
        self.recorded: dict[str, asyncio.Event] = {}  # set once a started match's record is handled
        self._tokens: dict[str, tuple[MatchRunner, Seat]] = {}
        # tokens of finished matches (the newest SPENT_TOKENS), so that a reused one hears "match over"
        self._spent: OrderedDict[str, str] = OrderedDict()
        self._tasks: set[asyncio.Task] = set()
        self._server: grpc.aio.Server | None = None
        from arena.referee.tooling import HealthServicer

        self._health = HealthServicer()

    @property
    def addresses(self) -> list[str]:
        """gRPC targets a bot can use as ARENA_ADDRESS."""
        out = []
        if self.unix_path is not None:
            out.append(f"unix://{self.unix_path}")
        if self.tcp is not None and self.tcp_port is not None:
            host = self.tcp.rsplit(":", 1)[0] or "127.0.0.1"
            out.append(f"{'127.0.0.1' if host in ('0.0.0.0', '[::]') else host}:{self.tcp_port}")
        return out

    async def start(self) -> None:
        from grpc_health.v1 import health_pb2

        from arena.proto import arena_pb2
        from arena.referee.management import add_management
        from arena.referee.tooling import HEALTH_SERVICE, add_tooling

        server = grpc.aio.server(
            interceptors=self.interceptors,
            options=[
                ("grpc.max_receive_message_length", GRPC_RECEIVE_CAP),
                ("grpc.max_send_message_length", MAX_REFEREE_MESSAGE),
                ("grpc.so_reuseport", 0),
                *self.connections.options(),
            ],
        )
        server.add_generic_rpc_handlers((play_handlers(RefereeServicer(self.claim, joining=self.joining)),))
        names = [REFEREE_SERVICE]
        if self.management:
            if self.services is not None:
                self.services(server)
            else:
                add_management(server, self)
            names.append(arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name)
        add_tooling(server, names, self._health)  # health Check/Watch/List, reflection v1 and v1alpha
        if self.unix_path is not None:
            self.unix_path.parent.mkdir(parents=True, exist_ok=True)
            if self.unix_path.exists():
                self.unix_path.unlink()
            server.add_insecure_port(f"unix://{self.unix_path}")
        if self.tcp is not None:
            if self.tcp_credentials is not None:
                self.tcp_port = server.add_secure_port(self.tcp, self.tcp_credentials)
            else:
                self.tcp_port = server.add_insecure_port(self.tcp)
            if not self.tcp_port:
                raise OSError(f"cannot listen on {self.tcp}")
        await server.start()
        for name in [*names, HEALTH_SERVICE]:
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        await self._health.set("", health_pb2.HealthCheckResponse.SERVING)
        self._server = server

    def create_match(
        self,
        spec: MatchSpec,
        handles: Sequence[BotHandle | None] = (None, None),
        *,
        pause_idle: bool = False,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> MatchRunner:
        """Register a match and its two seat tokens; run it with `await runner.run()` or start_match().
        TooManyMatches when `max_open` matches are open already."""
        if len(self.runners) >= self.max_open:
            raise TooManyMatches(
                f"{len(self.runners)} matches are open on this referee, its limit; wait for some to end "
                "or restart it with a higher --max-open-matches"
            )
        runner = MatchRunner(spec, handles, pause_idle=pause_idle, on_event=on_event)
        self.runners[spec.match_id] = runner
        for seat in runner.seats:
            self._tokens[seat.token] = (runner, seat)
        return runner

    def start_match(self, runner: MatchRunner) -> asyncio.Task:
        self.recorded[runner.spec.match_id] = asyncio.Event()
        task = asyncio.ensure_future(self._run_and_forget(runner))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _run_and_forget(self, runner: MatchRunner) -> None:
        """Run a started match, hand its record to `on_finished`, then forget everything but a small
        summary: a server that runs for months holds only its open matches."""
        match_id = runner.spec.match_id
        try:
            await runner.run()
        finally:
            self.release(runner)
            try:
                self._remember(runner)
            finally:
                self.runners.pop(match_id, None)
                event = self.recorded.pop(match_id, None)
                if event is not None:
                    event.set()

    def _remember(self, runner: MatchRunner) -> None:
        from arena.proto.codec import encode_record

        match_id, where, error, kept = runner.spec.match_id, None, "", b""
        if runner.record is None:
            error = "the match ended without a record (the referee failed; its log has the details)"
        elif self.on_finished is not None:
            try:
                where = self.on_finished(runner)
            except Exception as exc:  # the match is over either way; say so, never silently
                error = f"its record could not be written: {exc}"
                log.error("match %s: record not written: %s", match_id, exc)
            else:
                kept = b"" if where is not None else encode_record(runner.record)
        else:
            kept = encode_record(runner.record)
        self.finished[match_id] = Finished(match_id, runner.result, where, kept, error)
        while len(self.finished) > self.keep_finished:
            self.finished.popitem(last=False)

    def knows(self, match_id: str) -> bool:
        """An id in use: open, or finished and still remembered."""
        return match_id in self.runners or match_id in self.finished

    def release(self, runner: MatchRunner) -> None:
        """Forget a finished match's tokens (they can never be used again)."""
        for seat in runner.seats:
            self._tokens.pop(seat.token, None)
            self._spent[seat.token] = runner.spec.match_id
            while len(self._spent) > SPENT_TOKENS:
                self._spent.popitem(last=False)

    def claim(self, join: referee_pb2.Join) -> tuple[MatchRunner, Seat]:
        """Check a Join: the token must be known and unused, the protocol version supported."""
        entry = self._tokens.get(join.token)
        if entry is None and join.token in self._spent:
            raise JoinRefused(
                "FAILED_PRECONDITION",
                f"match {self._spent[join.token]} is over: its seat tokens cannot join again",
            )
        if entry is None:
            raise JoinRefused(
                "PERMISSION_DENIED",
                "unknown seat token: pass ARENA_TOKEN unchanged in Join.token",
            )
        runner, seat = entry
        check_claim(runner, seat)
        check_version(seat, join)
        seat.claimed = True
        return runner, seat

    async def stop(self, grace: float = 3.0) -> None:
        """Graceful shutdown: every match in flight ends (void, SHUTDOWN) and tells its bots, then stop."""
        await self._health.enter_graceful_shutdown()
        live = [r for r in self.runners.values() if not r.done.is_set()]
        for r in live:
            r.shutdown()
        if live:
            await asyncio.wait([asyncio.ensure_future(r.done.wait()) for r in live], timeout=grace)
        if self._server is not None:
            await self._server.stop(grace)
        if self.unix_path is not None and self.unix_path.exists():
            self.unix_path.unlink()
