"""The `Arena` gRPC service: authenticates each call, runs the operation off the event loop, and
turns every error into its proper status (never UNKNOWN).

The referee's own matches share this process's event loop, so operations run in worker threads: a
slow query or a build never delays a bot's clock. Database reads and the other short work of a call
run on the loop's default executor, which `add_arena_service` sizes for every stream the server
allows plus the calls (`arena.service.builds.install_call_executor`); bundle builds run on the
service's own build slots (`Service.builds`), never on those threads, so builds cannot starve a read.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message_factory import GetMessageClass

from arena.access.admin import bearer
from arena.access.forwarded import HEADER
from arena.access.roles import Principal
from arena.logs import REQUEST, REQUEST_HEADER, request_id
from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc
from arena.proto.lenient import Undecodable, lenient
from arena.service import ops_admin, ops_bots, ops_challenge, ops_controls, ops_results, ops_watch
from arena.service.builds import install_call_executor
from arena.service.core import Service, _host
from arena.service.errors import InvalidArgument, status_of
from arena.service.fields import check_fields
from arena.service.quota import Admission

log = logging.getLogger("arena.service")

Handler = Callable[..., Awaitable[Any]]
SERVICE = pb.DESCRIPTOR.services_by_name["Arena"]


def add_arena_service(servicer: ArenaService, server: grpc.aio.Server) -> None:
    """Register `servicer` like the generated add_ArenaServicer_to_server, but with deserializers
    that never raise: malformed requests reach the method and get INVALID_ARGUMENT. Called on the
    server's running loop, it gives that loop the calls' executor (`install_call_executor`)."""
    with contextlib.suppress(RuntimeError):  # no running loop: whoever runs one sizes its executor
        install_call_executor(asyncio.get_running_loop())
    kinds = {
        (False, False): grpc.unary_unary_rpc_method_handler,
        (True, False): grpc.stream_unary_rpc_method_handler,
        (False, True): grpc.unary_stream_rpc_method_handler,
        (True, True): grpc.stream_stream_rpc_method_handler,
    }
    handlers = {}
    for method in SERVICE.methods:
        make = kinds[(method.client_streaming, method.server_streaming)]
        handlers[method.name] = make(
            getattr(servicer, method.name),
            request_deserializer=lenient(GetMessageClass(method.input_type)),
            response_serializer=GetMessageClass(method.output_type).SerializeToString,
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE.full_name, handlers),))


def check_request(request: Any) -> None:
    if isinstance(request, Undecodable):
        raise InvalidArgument(f"the request is not a valid {request.type_name} message")
    check_fields(request)  # every string within its maximum (arena.limits)


def token_of(context: grpc.aio.ServicerContext) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            text = value if isinstance(value, str) else value.decode("latin-1")
            return bearer(text) or text
    return None


async def abort_for(context: grpc.aio.ServicerContext, exc: BaseException, method: str) -> None:
    status = status_of(exc)
    if status is None:
        log.exception("%s failed", method, exc_info=exc)
        await context.abort(
            grpc.StatusCode.INTERNAL, "internal error; the server's log has the details (it names the call)"
        )
    assert status is not None
    if status.retry_after is not None:
        context.set_trailing_metadata((("retry-after", str(status.retry_after)),))
    await context.abort(status.code, status.message)


def rpc(method: Handler) -> Handler:
    """Resolve the caller, then run `method(self, principal, request, context)`; map its errors."""

    @functools.wraps(method)
    async def wrapper(self: ArenaService, request: Any, context: grpc.aio.ServicerContext) -> Any:
        rid = REQUEST.set(request_id(_metadata(context, REQUEST_HEADER)))  # the call's lines carry it
        try:
            check_request(request)
            principal = await asyncio.to_thread(self.service.caller, token_of(context), self.address(context))
            return await method(self, principal, request, context)
        except grpc.aio.AbortError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every other error becomes its status
            await abort_for(context, exc, method.__name__)
        finally:
            REQUEST.reset(rid)

    return wrapper


def _metadata(context: grpc.aio.ServicerContext, key: str) -> str | None:
    for k, value in context.invocation_metadata() or ():
        if k == key:
            return value if isinstance(value, str) else value.decode("latin-1")
    return None


def threaded(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    async def run(*args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    return run


class ArenaService(arena_pb2_grpc.ArenaServicer):
    """Every call of arena.proto's `Arena`; CreateMatch/GetMatch go to the referee's own servicer."""

    def __init__(self, service: Service, referee: arena_pb2_grpc.ArenaServicer | None = None) -> None:
        self.service = service
        self._referee = referee

    def address(self, context: grpc.aio.ServicerContext) -> str:
        """The caller's host: the connection's, or the client a trusted proxy names (arena.access.forwarded)."""
        forwarded = [
            value if isinstance(value, str) else value.decode("latin-1")
            for key, value in context.invocation_metadata() or ()
            if key == HEADER
        ]
        return self.service.proxies.client(_host(context.peer() or ""), forwarded)

    # ---- a standalone referee ----
    async def CreateMatch(self, request: pb.CreateMatchRequest, context: grpc.aio.ServicerContext) -> Any:
        if isinstance(request, Undecodable):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the request is not a valid CreateMatchRequest"
            )
        if self._referee is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this server hosts no referee")
        assert self._referee is not None
        return await self._referee.CreateMatch(request, context)

    async def GetMatch(self, request: pb.GetMatchRequest, context: grpc.aio.ServicerContext) -> Any:
        if isinstance(request, Undecodable):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, "the request is not a valid GetMatchRequest"
            )
        if self._referee is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this server hosts no referee")
        assert self._referee is not None
        return await self._referee.GetMatch(request, context)

    # ---- bots ----
    async def _receive(
        self, request_iterator: AsyncIterator[pb.SubmitBotChunk], context: Any, admitted: list[Admission]
    ) -> tuple[Principal, pb.SubmitBotHeader, Any]:
        """The caller, the header and the uploaded file of a SubmitBot stream: the name, the owner,
        the size, an upload slot, room in the disk quota and the upload budget are all checked
        (`ops_bots.admit`) before any byte is read, the cap and the room while the bytes arrive. The
        admission is put in `admitted` as soon as it exists, for the caller to close."""
        principal = await asyncio.to_thread(self.service.caller, token_of(context), self.address(context))
        first = await anext(aiter(request_iterator), None)
        if first is not None:
            check_request(first)
        if first is None or first.WhichOneof("part") != "header":
            raise InvalidArgument("the first SubmitBotChunk must be the header (name, format)")
        header = first.header
        ops_bots.check_name(header.name)
        ops_bots.check_format(header.format)
        admission = await asyncio.to_thread(
            ops_bots.admit, self.service, principal, header.name, header.owner, header.size
        )
        admitted.append(admission)

        async def data() -> AsyncIterator[bytes]:
            async for chunk in request_iterator:
                check_request(chunk)
                if chunk.WhichOneof("part") != "data":
                    raise InvalidArgument("only the first SubmitBotChunk may be a header")
                yield chunk.data

        path = ops_bots.upload_path(admission.folder, header.format)
        await ops_bots.receive_upload(data(), self.service.upload_cap, path, admission)
        return principal, header, path

    async def SubmitBot(self, request_iterator: AsyncIterator[pb.SubmitBotChunk], context: Any) -> Any:
        admitted: list[Admission] = []
        try:
            principal, header, path = await self._receive(request_iterator, context, admitted)
            return await ops_bots.submit(
                self.service, admitted[0], principal, header.name, path, header.owner
            )
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await abort_for(context, exc, "SubmitBot")
        finally:
            for admission in admitted:  # its slot, its room and its folder, whatever ended the call
                admission.close()

    async def SubmitBotLive(
        self, request_iterator: AsyncIterator[pb.SubmitBotChunk], context: Any
    ) -> AsyncIterator[pb.SubmitBotProgress]:
        admitted: list[Admission] = []
        try:
            principal, header, path = await self._receive(request_iterator, context, admitted)
            async for event in ops_bots.submit_live(
                self.service, admitted[0], principal, header.name, path, header.owner
            ):
                yield event
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await abort_for(context, exc, "SubmitBotLive")
        finally:
            for admission in admitted:
                admission.close()

    @rpc
    async def ListBots(self, principal: Principal, request: pb.ListBotsRequest, context: Any) -> Any:
        return await threaded(ops_bots.list_bots)(
            self.service, request.owner, request.include_retired, request.limit, request.page_token
        )

    @rpc
    async def GetBot(self, principal: Principal, request: pb.GetBotRequest, context: Any) -> Any:
        return await threaded(ops_bots.get_bot)(self.service, request.name)

    @rpc
    async def RetireBot(self, principal: Principal, request: pb.RetireBotRequest, context: Any) -> Any:
        return await threaded(ops_bots.retire_bot)(self.service, principal, request.name)

    @rpc
    async def GetBotLogs(self, principal: Principal, request: pb.GetBotLogsRequest, context: Any) -> Any:
        return await threaded(ops_bots.bot_logs)(
            self.service, principal, request.name, request.match_id, request.limit
        )

    # ---- results ----
    @rpc
    async def ListSeasons(self, principal: Principal, request: pb.ListSeasonsRequest, context: Any) -> Any:
        return await threaded(ops_results.list_seasons)(self.service, request.limit, request.page_token)

    @rpc
    async def GetStandings(self, principal: Principal, request: pb.GetStandingsRequest, context: Any) -> Any:
        return await threaded(ops_results.get_standings)(self.service, request.season, request)

    @rpc
    async def ListMatches(self, principal: Principal, request: pb.ListMatchesRequest, context: Any) -> Any:
        return await threaded(ops_results.list_matches)(self.service, request)

    @rpc
    async def GetReplay(self, principal: Principal, request: pb.GetReplayRequest, context: Any) -> Any:
        return await threaded(ops_results.get_replay)(
            self.service, principal, request.match_id, request.private, request.offset
        )

    # ---- spectating ----
    async def WatchMatch(
        self, request: Any, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchEvent]:
        try:
            check_request(request)
            await asyncio.to_thread(self.service.caller, token_of(context), self.address(context))
            address = self.address(context)  # at most ops_watch.PER_ADDRESS streams each
            async for event in ops_watch.watch_capped(
                self.service, request.match_id, ops_watch.GRPC_SLOTS, address
            ):
                yield event
        except (grpc.aio.AbortError, asyncio.CancelledError):
            raise
        except Exception as exc:
            await abort_for(context, exc, "WatchMatch")

    # ---- challenges ----
    @rpc
    async def Challenge(self, principal: Principal, request: pb.ChallengeRequest, context: Any) -> Any:
        return await threaded(ops_challenge.challenge)(self.service, principal, request)

    # ---- the organiser ----
    @rpc
    async def CreateSeason(self, principal: Principal, request: pb.CreateSeasonRequest, context: Any) -> Any:
        return await threaded(ops_admin.create_season)(self.service, principal, request)

    @rpc
    async def StartSeason(self, principal: Principal, request: pb.SeasonRequest, context: Any) -> Any:
        return await threaded(ops_admin.season_step)(self.service, principal, request.name, "start")

    @rpc
    async def FreezeSeason(self, principal: Principal, request: pb.SeasonRequest, context: Any) -> Any:
        return await threaded(ops_admin.season_step)(self.service, principal, request.name, "freeze")

    @rpc
    async def CloseSeason(self, principal: Principal, request: pb.SeasonRequest, context: Any) -> Any:
        return await threaded(ops_admin.season_step)(self.service, principal, request.name, "close")

    @rpc
    async def SuspendBot(self, principal: Principal, request: pb.SuspendBotRequest, context: Any) -> Any:
        return await threaded(functools.partial(ops_admin.suspend, on=True))(
            self.service, principal, request.name, request.reason
        )

    @rpc
    async def ReinstateBot(self, principal: Principal, request: pb.SuspendBotRequest, context: Any) -> Any:
        return await threaded(functools.partial(ops_admin.suspend, on=False))(
            self.service, principal, request.name, request.reason
        )

    @rpc
    async def ListOwners(self, principal: Principal, request: pb.ListOwnersRequest, context: Any) -> Any:
        return await threaded(ops_admin.list_owners)(
            self.service, principal, request.limit, request.page_token
        )

    @rpc
    async def AddOwner(self, principal: Principal, request: pb.OwnerRequest, context: Any) -> Any:
        return await threaded(ops_admin.manage_owner)(self.service, principal, request.name, "add")

    @rpc
    async def RotateOwner(self, principal: Principal, request: pb.OwnerRequest, context: Any) -> Any:
        return await threaded(ops_admin.manage_owner)(self.service, principal, request.name, "rotate")

    @rpc
    async def RevokeOwner(self, principal: Principal, request: pb.OwnerRequest, context: Any) -> Any:
        return await threaded(ops_admin.manage_owner)(self.service, principal, request.name, "revoke")

    # ---- the organiser's controls ----
    def _who(self, context: grpc.aio.ServicerContext) -> str:
        return ops_controls.actor("grpc", self.address(context))

    @rpc
    async def PauseSeason(self, principal: Principal, request: pb.SeasonRequest, context: Any) -> Any:
        fn = functools.partial(ops_controls.pause, on=True)
        return await threaded(fn)(self.service, principal, request.name, self._who(context))

    @rpc
    async def ResumeSeason(self, principal: Principal, request: pb.SeasonRequest, context: Any) -> Any:
        fn = functools.partial(ops_controls.pause, on=False)
        return await threaded(fn)(self.service, principal, request.name, self._who(context))

    @rpc
    async def RequeueFailed(
        self, principal: Principal, request: pb.RequeueFailedRequest, context: Any
    ) -> Any:
        return await threaded(ops_controls.requeue)(self.service, principal, request, self._who(context))

    @rpc
    async def VoidMatch(self, principal: Principal, request: pb.VoidMatchRequest, context: Any) -> Any:
        return await threaded(ops_controls.void)(self.service, principal, request, self._who(context))

    @rpc
    async def RecomputeRatings(self, principal: Principal, request: pb.SeasonRequest, context: Any) -> Any:
        return await threaded(ops_controls.recompute)(
            self.service, principal, request.name, self._who(context)
        )

    @rpc
    async def SuspendOwner(self, principal: Principal, request: pb.SuspendOwnerRequest, context: Any) -> Any:
        fn = functools.partial(ops_controls.suspend_owner, on=True)
        return await threaded(fn)(self.service, principal, request.name, request.reason, self._who(context))

    @rpc
    async def ReinstateOwner(
        self, principal: Principal, request: pb.SuspendOwnerRequest, context: Any
    ) -> Any:
        fn = functools.partial(ops_controls.suspend_owner, on=False)
        return await threaded(fn)(self.service, principal, request.name, request.reason, self._who(context))

    @rpc
    async def ListWorkers(self, principal: Principal, request: pb.ListWorkersRequest, context: Any) -> Any:
        return await threaded(ops_controls.list_workers)(self.service, principal)

    @rpc
    async def DrainWorker(self, principal: Principal, request: pb.DrainWorkerRequest, context: Any) -> Any:
        fn = functools.partial(ops_controls.drain, on=True)
        return await threaded(fn)(self.service, principal, request, self._who(context))

    @rpc
    async def UndrainWorker(self, principal: Principal, request: pb.DrainWorkerRequest, context: Any) -> Any:
        fn = functools.partial(ops_controls.drain, on=False)
        return await threaded(fn)(self.service, principal, request, self._who(context))

    @rpc
    async def ListAdminActions(
        self, principal: Principal, request: pb.ListAdminActionsRequest, context: Any
    ) -> Any:
        return await threaded(ops_controls.list_actions)(self.service, principal, request.limit)
