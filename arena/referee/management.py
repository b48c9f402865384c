"""The management service of `arena serve` (arena.proto's `Arena`): create a match and read its result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import grpc

from arena.engine import Rules, RulesError
from arena.proto import arena_pb2, arena_pb2_grpc
from arena.proto.codec import encode_record
from arena.referee.clock import TimeControl
from arena.referee.match import MatchSpec

if TYPE_CHECKING:
    from arena.referee.server import RefereeServer


class ArenaServicer(arena_pb2_grpc.ArenaServicer):
    """The management API: create a match and read its result. Used by `arena serve` clients."""

    def __init__(self, server: RefereeServer) -> None:
        self._server = server

    async def CreateMatch(self, request: arena_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext):
        try:
            rules = Rules.from_pairs(list(request.rules))
        except RulesError as exc:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        kwargs: dict[str, Any] = {}
        if request.match_id:
            if request.match_id in self._server.runners:
                await context.abort(grpc.StatusCode.ALREADY_EXISTS, f"match {request.match_id} exists")
            kwargs["match_id"] = request.match_id
        spec = MatchSpec(
            rules=rules,
            seed=request.seed,
            time_control=TimeControl.from_proto(request.time_control),
            **kwargs,
        )
        runner = self._server.create_match(spec)
        self._server.start_match(runner)
        return arena_pb2.CreateMatchResponse(match_id=spec.match_id, tokens=list(runner.tokens))

    async def GetMatch(self, request: arena_pb2.GetMatchRequest, context: grpc.aio.ServicerContext):
        runner = self._server.runners.get(request.match_id)
        if runner is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r} on this referee")
        if request.wait:
            await runner.done.wait()
        status = arena_pb2.MatchStatus(match_id=runner.spec.match_id, state=runner.state)
        if runner.result is not None and runner.record is not None:
            status.result.CopyFrom(runner.result)
            status.record = encode_record(runner.record)
        return status
