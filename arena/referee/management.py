"""The management service of `arena serve` (arena.proto's `Arena`): create a match and read its result.

Both calls hand out secrets (CreateMatch returns the two seat tokens, GetMatch the whole record with
the bots' `Log` lines, in pieces of at most 1 MiB: arena/proto/pieces.py), so both need the
organiser's admin token as gRPC metadata `authorization: Bearer <token>`; a referee without one
refuses them all. Every answer is OK or a named
status: bad input is INVALID_ARGUMENT naming the field, a bug is INTERNAL with the traceback in the
log, never UNKNOWN. Error details quote at most a short, ASCII-escaped prefix of what was sent.
The Referee `Play` service (server.py) is not guarded here: each seat proves itself with its token.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import grpc

from arena.access.admin import bearer
from arena.engine import Rules, RulesError
from arena.proto import arena_pb2, arena_pb2_grpc
from arena.proto.codec import encode_record
from arena.proto.lenient import Undecodable, lenient
from arena.proto.pieces import BadOffset, piece_of
from arena.referee.clock import TimeControl
from arena.referee.convert import rules_to_proto
from arena.referee.spec import MatchSpec

if TYPE_CHECKING:
    from arena.referee.server import RefereeServer

log = logging.getLogger(__name__)

SERVICE = "elfern.arena.v1.Arena"
MATCH_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MATCH_ID_RULE = "1 to 64 characters from A-Z a-z 0-9 _ -"
ECHO = 40  # characters of an input quoted in an error detail (always far below the 200 promised)
MAX_DETAIL = 400  # characters of any error detail, whatever it quotes
MAX_RULES = 32  # entries in CreateMatchRequest.rules (there are 10 options)
MAX_RULE_ENTRY = 64  # characters of one "key=value" entry (the longest real one has 22)
UINT32_MAX = 2**32 - 1  # rules and time-control fields are uint32 on the wire and in the record


class BadRequest(ValueError):
    """A request field that cannot be used; answered INVALID_ARGUMENT with `field: message`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class UnsafeReplayPath(ValueError):
    """A replay path that would not be a plain file directly inside the replays directory."""


class _Refusal(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


def quote(text: str, limit: int = ECHO) -> str:
    """At most `limit` characters of an input, ASCII-escaped, with its length when cut."""
    if len(text) <= limit:
        return ascii(text)
    return f"{ascii(text[:limit])}... ({len(text)} characters)"


def clip(message: str, limit: int = MAX_DETAIL) -> str:
    """The last bound on an error detail, whatever built it."""
    return message if len(message) <= limit else message[: limit - 3] + "..."


# -- validation (also used by `arena serve --create`) ----------------------------------------------
def check_match_id(value: str, field: str = "match_id") -> str:
    """`value` if it is a safe match id (it becomes a file name), else BadRequest."""
    if not MATCH_ID.fullmatch(value):
        why = "is too long" if len(value) > 64 else "is not a match id"
        raise BadRequest(field, f"{quote(value)} {why}; use {MATCH_ID_RULE}")
    return value


def check_rules(rules: Rules) -> Rules:
    """`rules` if they fit the wire and the record, else BadRequest. The engine bounds flags and
    max_deals (10000), well inside uint32; this probe keeps any later option from becoming a crash."""
    try:
        rules_to_proto(rules)
    except (ValueError, TypeError) as exc:
        raise BadRequest("rules", clip(str(exc), 120)) from None
    return rules


def rules_of(pairs: list[str]) -> Rules:
    """Rules from "key=value" entries, bounded before they are parsed so no message quotes much."""
    if len(pairs) > MAX_RULES:
        raise BadRequest("rules", f"{len(pairs)} entries; at most {MAX_RULES} (there are 10 options)")
    for i, pair in enumerate(pairs):
        if len(pair) > MAX_RULE_ENTRY:
            raise BadRequest(
                "rules", f"entry {i} {quote(pair)} is too long; at most {MAX_RULE_ENTRY} characters"
            )
    try:
        rules = Rules.from_pairs(pairs)
    except RulesError as exc:
        raise BadRequest("rules", clip(str(exc), 300)) from None
    return check_rules(rules)


def check_time_control(tc: TimeControl) -> TimeControl:
    """`tc` if every clock fits the wire's uint32 milliseconds (Welcome and the record carry them)."""
    for name in ("startup", "move", "bank"):
        ms = round(getattr(tc, name) * 1000)
        if not 0 <= ms <= UINT32_MAX:
            raise BadRequest(
                "time_control",
                f"{name}={getattr(tc, name):g}s is out of range; allowed: 0 to {UINT32_MAX // 1000} s",
            )
    return tc


def spec_of(request: arena_pb2.CreateMatchRequest, taken: Callable[[str], bool]) -> MatchSpec:
    """The MatchSpec a CreateMatchRequest asks for; BadRequest names the first bad field."""
    if request.match_id:
        match_id = check_match_id(request.match_id)
    else:  # empty: a fresh id nobody has used on this referee
        match_id = secrets.token_hex(6)
        while taken(match_id):
            match_id = secrets.token_hex(6)
    rules = rules_of(list(request.rules))
    tc = check_time_control(TimeControl.from_proto(request.time_control))
    return MatchSpec(rules=rules, seed=request.seed, time_control=tc, match_id=match_id)


# -- the service ---------------------------------------------------------------------------------
_Method = TypeVar("_Method", bound=Callable[..., Awaitable[Any]])


def _guarded(method: _Method) -> _Method:
    """Admin token first, then the method; every failure becomes a named status (never UNKNOWN)."""
    name = method.__name__

    @functools.wraps(method)
    async def call(self: ArenaServicer, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            self._authorize(name, context)
            if isinstance(request, Undecodable):
                raise BadRequest("request", f"the bytes sent are not a valid {request.message_type}")
            return await method(self, request, context)
        except _Refusal as exc:
            await context.abort(exc.code, clip(str(exc)))
        except BadRequest as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, clip(str(exc)))
        except grpc.aio.AbortError:
            raise
        except Exception:  # a bug: the caller gets a named status, the operator the traceback
            log.exception("%s from %s failed", name, context.peer())
            await context.abort(
                grpc.StatusCode.INTERNAL, f"{name} failed inside the referee; its log has the details"
            )

    return call  # type: ignore[return-value]


class ArenaServicer(arena_pb2_grpc.ArenaServicer):
    """The management API: create a match and read its result. Used by `arena serve` clients."""

    def __init__(self, server: RefereeServer) -> None:
        self._server = server

    def _authorize(self, method: str, context: grpc.aio.ServicerContext) -> None:
        token = self._server.admin_token
        if token is None:
            raise _Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                "this referee has no admin token, so its management calls are off; restart `arena serve` "
                "with --admin-token-file PATH or ARENA_ADMIN_TOKEN set",
            )
        values = [v for k, v in (context.invocation_metadata() or ()) if k == "authorization"]
        presented = bearer(values[0]) if len(values) == 1 and isinstance(values[0], str) else None
        if not token.check(presented):
            log.info(
                "%s from %s refused: %s admin token", method, context.peer(), "a wrong" if values else "no"
            )
            raise _Refusal(
                grpc.StatusCode.UNAUTHENTICATED,
                f"{method} needs the admin token: send the metadata `authorization: Bearer <token>`"
                + (" (the one sent is not it)" if values else ""),
            )

    @_guarded
    async def CreateMatch(
        self, request: arena_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> arena_pb2.CreateMatchResponse:
        from arena.referee.server import TooManyMatches

        spec = spec_of(request, self._server.knows)
        if self._server.knows(spec.match_id):
            raise _Refusal(
                grpc.StatusCode.ALREADY_EXISTS,
                f"match {spec.match_id} exists on this referee; pick another match_id or leave it empty",
            )
        try:
            runner = self._server.create_match(spec)
        except TooManyMatches as exc:
            raise _Refusal(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)) from None
        self._server.start_match(runner)
        log.info("match %s created by %s", spec.match_id, context.peer())
        return arena_pb2.CreateMatchResponse(match_id=spec.match_id, tokens=list(runner.tokens))

    @_guarded
    async def GetMatch(
        self, request: arena_pb2.GetMatchRequest, context: grpc.aio.ServicerContext
    ) -> arena_pb2.MatchStatus:
        if not request.match_id:
            raise BadRequest("match_id", "is empty; give the id CreateMatch returned")
        match_id = check_match_id(request.match_id)
        runner = self._server.runners.get(match_id)
        if runner is not None:
            if not request.wait:
                return arena_pb2.MatchStatus(match_id=match_id, state=runner.state)
            recorded = self._server.recorded.get(match_id)
            await (recorded.wait() if recorded is not None else runner.done.wait())
            if recorded is None:  # run by its creator, not start_match(): the runner has it all
                status = arena_pb2.MatchStatus(match_id=match_id, state=runner.state)
                if runner.result is not None and runner.record is not None:
                    status.result.CopyFrom(runner.result)
                    with_piece(status, encode_record(runner.record), request.offset)
                return status
        done = self._server.finished.get(match_id)
        if done is None:
            raise _Refusal(
                grpc.StatusCode.NOT_FOUND,
                f"no match {match_id} on this referee (a finished match is remembered among the last "
                f"{self._server.keep_finished}; its replay file stays in the replays folder)",
            )
        if done.error:
            raise _Refusal(grpc.StatusCode.DATA_LOSS, f"match {match_id} is over, but {done.error}")
        record = done.record
        if done.replay is not None:
            try:
                record = done.replay.read_bytes()
            except OSError as exc:
                log.error("match %s: replay %s unreadable: %s", match_id, done.replay, exc)
                raise _Refusal(
                    grpc.StatusCode.DATA_LOSS,
                    f"match {match_id} is over, but its replay file can no longer be read ({exc.strerror})",
                ) from None
        status = arena_pb2.MatchStatus(match_id=match_id, state="OVER")
        with_piece(status, record, request.offset)
        if done.result is not None:
            status.result.CopyFrom(done.result)
        return status


def with_piece(status: arena_pb2.MatchStatus, record: bytes, offset: int) -> None:
    """Put `record`'s piece at `offset` in `status` (at most pieces.PIECE bytes: see arena.proto)."""
    try:
        piece = piece_of(record, offset)
    except BadOffset as exc:
        raise BadRequest("offset", str(exc).removeprefix(f"offset {offset}: ")) from None
    status.record = piece.data
    status.total_size = piece.total_size
    status.next_offset = piece.next_offset
    status.sha256 = piece.sha256


def add_management(grpc_server: grpc.aio.Server, referee: RefereeServer) -> None:
    """Register the Arena service on `grpc_server` (as add_ArenaServicer_to_server, but lenient)."""
    servicer = ArenaServicer(referee)
    handlers = {
        "CreateMatch": grpc.unary_unary_rpc_method_handler(
            servicer.CreateMatch,
            request_deserializer=lenient(arena_pb2.CreateMatchRequest),
            response_serializer=arena_pb2.CreateMatchResponse.SerializeToString,
        ),
        "GetMatch": grpc.unary_unary_rpc_method_handler(
            servicer.GetMatch,
            request_deserializer=lenient(arena_pb2.GetMatchRequest),
            response_serializer=arena_pb2.MatchStatus.SerializeToString,
        ),
    }
    grpc_server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))


# -- the replays directory -----------------------------------------------------------------------
class ReplayDir:
    """Where `arena serve` writes finished matches' replays: only ever a plain file directly inside it.

    The id is checked again (the regex is the first defence, this the second): the final path is
    resolved and must sit directly in the resolved directory, which must still be the one resolved
    at start. The file is written beside its target and renamed over it inside an open directory
    descriptor, so a symbolic link planted under the name is replaced, never followed. Files are
    0600: a replay holds both bots' `Log` lines, which are private to their owners and the admin.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.real: Path | None = None

    def prepare(self) -> Path:
        """Create the directory (0700 when new) and remember where it really is; OSError if it cannot."""
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.real = self.root.resolve(strict=True)
        if not self.real.is_dir():
            raise NotADirectoryError(f"--replays {self.root} is not a directory")
        return self.real

    def path_for(self, match_id: str) -> Path:
        """The replay's path, or UnsafeReplayPath when it would not be directly inside the directory."""
        real = self.real or self.prepare()
        if not MATCH_ID.fullmatch(match_id):
            raise UnsafeReplayPath(f"match id {quote(match_id)} is not a safe file name")
        if self.root.resolve() != real:
            raise UnsafeReplayPath(f"--replays {self.root} now resolves elsewhere than {real}")
        path = real / f"{match_id}.replay"
        if path.resolve().parent != real:
            raise UnsafeReplayPath(f"{path} resolves outside {real}")
        return path

    def write(self, match_id: str, data: bytes) -> Path:
        """Write one replay; UnsafeReplayPath or OSError when it cannot be written safely."""
        path = self.path_for(match_id)
        tmp = f".{match_id}.{secrets.token_hex(4)}.tmp"
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd
            )
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(tmp, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=dir_fd)
                except OSError:
                    pass
                raise
        finally:
            os.close(dir_fd)
        return path
