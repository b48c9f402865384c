"""A bot's own socket: one small gRPC server per seat that serves that seat's `Play` stream and nothing else.

Whatever reaches a bot's socket is that bot (its directory is private to the bot's uid), so the socket
gives it no more than one seat needs. Every bound here was measured with a raw HTTP/2 client
(tests/referee/h2flood.py): before, 200 streams each holding an unfinished 4 MiB message made the referee
hold hundreds of MiB; with these options the same flood moves its RSS by about 1 MiB.

- **Messages**: gRPC's receive limit is `BOT_SOCKET_RECEIVE_CAP`, just over the referee's own 16 KiB cap
  (`MAX_BOT_MESSAGE`). A message up to it reaches the referee's parser and is a `PROTOCOL_ERROR`; a
  larger one is refused inside gRPC's core as soon as its length prefix arrives, before any of it is
  buffered (the bot sees `RESOURCE_EXHAUSTED`; the referee sees its stream end: `CRASH` or `DISCONNECT`).
- **Streams**: at most `SEAT_RPCS` calls at once on the whole socket (the seat's stream, and one more
  for a retried Join); more are refused with `RESOURCE_EXHAUSTED`. HTTP/2 admits `SEAT_STREAMS` per
  connection, so that a gRPC client's extra calls are refused with a status instead of queueing.
- **Calls over the match**: `SEAT_CALL_BUDGET`. Every call that gets past gRPC's core costs the
  referee's event loop (shared by every match in the process) the same, whatever it asks for, so a
  bot that keeps opening calls would slow other matches down. Past the budget, each further call is
  refused with `RESOURCE_EXHAUSTED` and the seat loses with `PROTOCOL_ERROR`; its match, and with it
  this socket, ends.
- **Connections**: at most `SEAT_CONNECTIONS`; further ones are closed by gRPC's core at accept.
- **Buffers**: no BDP probing (it grows the flow-control windows toward the link's bandwidth-delay
  product), 16 KiB frames, 8 KiB of metadata.
- **Services**: `Play` only. Health and reflection stay on the operator's ports (`arena serve`); here
  they answer `UNIMPLEMENTED`.
- **Tokens**: only this seat's token joins; any other (the other seat's included) is `PERMISSION_DENIED`.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import grpc

from arena.proto import referee_pb2
from arena.referee.claims import JoinRefused, check_claim
from arena.referee.match import MatchRunner
from arena.referee.server import (
    MAX_BOT_MESSAGE,
    MAX_REFEREE_MESSAGE,
    RefereeServicer,
    check_version,
    play_handlers,
)
from arena.referee.session import BAD, Event, Seat

BOT_SOCKET_RECEIVE_CAP = MAX_BOT_MESSAGE + 1024  # gRPC's limit: room for the 16 KiB cap and framing
SEAT_RPCS = 2  # calls at once: the seat's stream, and one more so that a refused Join can be retried
SEAT_STREAMS = 4  # HTTP/2 streams per connection (more than SEAT_RPCS: extra calls get a status)
SEAT_CONNECTIONS = 2
SEAT_CALL_BUDGET = 16  # calls over the whole match: a bot needs one, a few if its Join is refused

BOT_SOCKET_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.max_receive_message_length", BOT_SOCKET_RECEIVE_CAP),
    ("grpc.max_send_message_length", MAX_REFEREE_MESSAGE),
    ("grpc.so_reuseport", 0),
    ("grpc.max_concurrent_streams", SEAT_STREAMS),
    ("grpc.max_allowed_incoming_connections", SEAT_CONNECTIONS),
    ("grpc.http2.bdp_probe", 0),
    ("grpc.http2.max_frame_size", 16384),
    ("grpc.max_metadata_size", 8192),
)


async def _refuse(request_iterator: Any, context: grpc.aio.ServicerContext) -> None:
    await context.abort(
        grpc.StatusCode.RESOURCE_EXHAUSTED, f"this socket's budget of {SEAT_CALL_BUDGET} calls is spent"
    )


# any method: it answers before reading
_REFUSED: grpc.RpcMethodHandler[Any, Any] = grpc.stream_stream_rpc_method_handler(_refuse)
_Request = TypeVar("_Request")
_Response = TypeVar("_Response")


class _CallBudget(grpc.aio.ServerInterceptor):
    """Counts every call that reaches the referee (before gRPC's concurrency limit and method lookup)."""

    def __init__(self, socket: BotSocket) -> None:
        self._socket = socket

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[_Request, _Response] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[_Request, _Response] | None:
        self._socket.calls += 1
        if self._socket.calls > SEAT_CALL_BUDGET:
            self._socket.overspent()
            return _REFUSED
        return await continuation(handler_call_details)


class BotSocket:
    """The server for one seat of one match, on a Unix socket (mode 0600 in a 0700 directory) and/or
    TCP (a remote seat). Create and use it inside the referee's event loop."""

    def __init__(
        self, runner: MatchRunner, seat: int, *, unix_path: str | Path | None = None, tcp: str | None = None
    ) -> None:
        if unix_path is None and tcp is None:
            raise ValueError("BotSocket needs a unix_path, a tcp address, or both")
        self.runner = runner
        self.seat: Seat = runner.seats[seat]
        self.unix_path = Path(unix_path) if unix_path is not None else None
        self.tcp = tcp
        self.tcp_port: int | None = None
        self.calls = 0  # calls that reached the referee, of SEAT_CALL_BUDGET
        self._server: grpc.aio.Server | None = None

    @property
    def addresses(self) -> list[str]:
        """gRPC targets this seat's bot can use as ARENA_ADDRESS (Unix first, then TCP)."""
        out = []
        if self.unix_path is not None:
            out.append(f"unix://{self.unix_path}")
        if self.tcp is not None and self.tcp_port is not None:
            host = self.tcp.rsplit(":", 1)[0] or "127.0.0.1"
            out.append(f"{'127.0.0.1' if host in ('0.0.0.0', '[::]') else host}:{self.tcp_port}")
        return out

    def claim(self, join: referee_pb2.Join) -> tuple[MatchRunner, Seat]:
        """Only this seat's token, unused, in a match not over, with a protocol version we speak."""
        seat = self.seat
        if join.token != seat.token:
            raise JoinRefused(
                "PERMISSION_DENIED",
                f"this socket serves seat {seat.index} only: pass its ARENA_TOKEN unchanged in Join.token",
            )
        check_claim(self.runner, seat)
        check_version(seat, join)
        seat.claimed = True
        return self.runner, seat

    def overspent(self) -> None:
        """The seat broke the protocol by opening call after call: it loses (once), its match ends."""
        seat = self.seat
        if seat.bad_reason or self.runner.state == "OVER":
            return
        seat.bad_reason = f"opened more than {SEAT_CALL_BUDGET} calls on its socket (a bot needs one stream)"
        self.runner.queue.post(Event(BAD, seat.index, seat.bad_reason))

    async def start(self) -> None:
        server = grpc.aio.server(
            options=list(BOT_SOCKET_OPTIONS),
            maximum_concurrent_rpcs=SEAT_RPCS,
            interceptors=[_CallBudget(self)],
        )
        server.add_generic_rpc_handlers((play_handlers(RefereeServicer(self.claim, BOT_SOCKET_RECEIVE_CAP)),))
        try:
            if self.unix_path is not None:
                folder = self.unix_path.parent
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                os.chmod(folder, 0o700)  # mkdir's mode is cut by the umask; and exist_ok keeps an old mode
                if self.unix_path.is_socket() or self.unix_path.is_symlink():
                    self.unix_path.unlink()
                server.add_insecure_port(f"unix://{self.unix_path}")
            if self.tcp is not None:
                self.tcp_port = server.add_insecure_port(self.tcp)
                if not self.tcp_port:
                    raise OSError(f"cannot listen on {self.tcp}")
            await server.start()
        except BaseException:
            await server.stop(None)
            raise
        if self.unix_path is not None:
            os.chmod(self.unix_path, 0o600)  # gRPC binds with the umask's mode; the folder kept it private
        self._server = server

    async def stop(self, grace: float = 0.5) -> None:
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        if self.unix_path is not None and (self.unix_path.is_socket() or self.unix_path.is_symlink()):
            self.unix_path.unlink()
