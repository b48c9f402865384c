"""Calls in flight on the gRPC server, bounded in all and per address (`arena serve --max-calls`,
`--max-calls-per-address`).

Every call but a bot's `Play` holds one of `total` places while it runs, and one of `per_address`
places of its caller's address (none for a trusted proxy, `FORWARDED_ALLOW_IPS`, whose own limits
are the per-client bound, nor for the Unix socket): the default total is the calls' executor (`call_threads`: one
thread per stream the server allows and the calls' own), so every call in flight can have a thread
for its reads. A call over either bound is answered at once with RESOURCE_EXHAUSTED and trailing
metadata `retry-after`, naming the bound; it holds nothing. The other callers keep being served: a
caller who holds many calls open spends its own address's places first.

`Play` is not counted here: until its Join is accepted a bot's stream holds a place of its own
bound (`arena.referee.joining`, `--max-joining`), and once joined it is a seat, which lasts its
match and is bounded by the matches open (`--max-open-matches`). The streams with budgets of their own
(`WatchMatch`, the uploads) count here too, so the per-address bound sits above theirs.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from arena.access.forwarded import trusted_hosts
from arena.access.slots import Full, Slots, peer_host
from arena.referee.server import REFEREE_SERVICE

log = logging.getLogger("arena.service")

PER_ADDRESS = 32  # calls at once from one address: 8 watch streams, 2 uploads and room for calls
RETRY_AFTER = 1  # seconds a refused caller is told to wait: calls are short
UNCOUNTED = frozenset({f"/{REFEREE_SERVICE}/Play"})


class InFlight(Slots):
    """Counts calls in flight, in all and per address; `enter` admits one or says why not."""

    def __init__(
        self, total: int, per_address: int = PER_ADDRESS, trusted: Callable[[str], bool] | None = None
    ) -> None:
        if total < 1 or per_address < 1:
            raise ValueError("calls in flight: at least 1 in all and per address")
        # trusted proxies and the Unix socket (local callers) have no per-address bound
        proxies = trusted or trusted_hosts()
        super().__init__(total, per_address, lambda address: address == "unix" or proxies(address))

    @property
    def running(self) -> int:
        """The calls in flight now."""
        return self.held

    def enter(self, address: str) -> str | None:
        """Take a place for a call from `address`: None, or the refusal's message."""
        full = self.take(address)
        if full is Full.ADDRESS:
            return (
                f"{self.by_address[address]} calls are in flight from {address}, at most "
                f"{self.per_address} at once per address (--max-calls-per-address); retry after "
                f"{RETRY_AFTER} s"
            )
        if full is Full.ALL:
            return (
                f"the server has {self.held} calls in flight, its limit (--max-calls); retry after "
                f"{RETRY_AFTER} s"
            )
        return None

    def leave(self, address: str) -> None:
        self.give_back(address)


class InFlightLimit(grpc.aio.ServerInterceptor):
    """Wraps every method's handler (but `Play`) so that its call holds a place of `gate` while it
    runs. It runs on the server's event loop only, so the counts need no lock."""

    def __init__(self, gate: InFlight) -> None:
        self.gate = gate

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None or handler_call_details.method in UNCOUNTED:
            return handler
        return _gated(handler, self.gate)


_KINDS = {
    "unary_unary": grpc.unary_unary_rpc_method_handler,
    "unary_stream": grpc.unary_stream_rpc_method_handler,
    "stream_unary": grpc.stream_unary_rpc_method_handler,
    "stream_stream": grpc.stream_stream_rpc_method_handler,
}


def rewrapped(
    handler: grpc.RpcMethodHandler[Any, Any], wrap: Callable[[Callable[..., Any]], Callable[..., Any]]
) -> grpc.RpcMethodHandler[Any, Any]:
    """`handler` with its behaviour (whichever of the four kinds it has) replaced by `wrap(behaviour)`,
    its (de)serializers kept: how a server interceptor puts code around a call."""
    for kind, make in _KINDS.items():
        behaviour = getattr(handler, kind)
        if behaviour is not None:
            return make(
                wrap(behaviour),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    return handler


def _gated(handler: grpc.RpcMethodHandler[Any, Any], gate: InFlight) -> grpc.RpcMethodHandler[Any, Any]:
    return rewrapped(handler, lambda behaviour: _wrap(behaviour, gate))


async def _refuse(context: grpc.aio.ServicerContext, message: str) -> None:
    context.set_trailing_metadata((("retry-after", str(RETRY_AFTER)),))
    await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, message)


def _wrap(behaviour: Callable[..., Any], gate: InFlight) -> Callable[..., Any]:
    """`behaviour` holding a place of `gate` while it runs: an async generator stays one."""
    if inspect.isasyncgenfunction(behaviour):

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            address = peer_host(context.peer() or "")
            refusal = gate.enter(address)
            if refusal is not None:
                await _refuse(context, refusal)
            try:
                async for item in behaviour(request, context):
                    yield item
            finally:
                gate.leave(address)

        return stream

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        address = peer_host(context.peer() or "")
        refusal = gate.enter(address)
        if refusal is not None:
            await _refuse(context, refusal)
        try:
            answer = behaviour(request, context)
            return await answer if inspect.isawaitable(answer) else answer
        finally:
            gate.leave(address)

    return call
