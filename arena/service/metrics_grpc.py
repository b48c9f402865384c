"""gRPC calls by method, status code and latency: a server interceptor for `arena serve`.

The method label is the call's full name when it is one the server serves (the Arena and Referee
services, health checking, reflection), else `other`: a client can send any method name, and it
must not grow the label set. A stream's latency is its whole life (a bot's `Play` lasts its match).
Counting happens only while `arena.metrics` is on (`arena serve --metrics`).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from arena import metrics
from arena.proto import arena_pb2, referee_pb2, replay_pb2
from arena.service.inflight import rewrapped

EXTRA = (  # what grpcio's own services answer on the server
    "/grpc.health.v1.Health/Check",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
)


def known_methods() -> frozenset[str]:
    """Every method name the server may answer: the label's closed set (with `other`)."""
    names = set(EXTRA)
    for module in (arena_pb2, referee_pb2, replay_pb2):
        for service in module.DESCRIPTOR.services_by_name.values():
            names.update(f"/{service.full_name}/{m.name}" for m in service.methods)
    return frozenset(names)


METHODS = known_methods()


def _code(context: grpc.aio.ServicerContext, default: grpc.StatusCode) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):  # some grpcio versions keep the number
        return next((c.name for c in grpc.StatusCode if c.value[0] == code), default.name)
    return default.name


def _count(method: str, code: str, seconds: float) -> None:
    d = metrics.defs()
    if d is not None:
        d.GRPC_CALLS.labels(method, code).inc()
        d.GRPC_SECONDS.labels(method).observe(seconds)


class CallMetrics(grpc.aio.ServerInterceptor):
    """Counts every call (put it first among the interceptors, so refusals by the others count too)."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if metrics.defs() is None:
            return handler
        method = metrics.closed(handler_call_details.method, METHODS)
        if handler is None:  # grpcio answers UNIMPLEMENTED itself
            _count(method, grpc.StatusCode.UNIMPLEMENTED.name, 0.0)
            return None
        return rewrapped(handler, lambda behaviour: _wrap(behaviour, method))


def _wrap(behaviour: Callable[..., Any], method: str) -> Callable[..., Any]:
    """`behaviour`, counted once it ends with its status code and its time."""
    if inspect.isasyncgenfunction(behaviour):

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            started, code = time.perf_counter(), grpc.StatusCode.UNKNOWN.name
            try:
                async for item in behaviour(request, context):
                    yield item
                code = _code(context, grpc.StatusCode.OK)
            except (asyncio.CancelledError, GeneratorExit):
                code = grpc.StatusCode.CANCELLED.name
                raise
            except BaseException:
                code = _code(context, grpc.StatusCode.UNKNOWN)
                raise
            finally:
                _count(method, code, time.perf_counter() - started)

        return stream

    async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
        started, code = time.perf_counter(), grpc.StatusCode.UNKNOWN.name
        try:
            answer = behaviour(request, context)
            result = await answer if inspect.isawaitable(answer) else answer
            code = _code(context, grpc.StatusCode.OK)
            return result
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED.name
            raise
        except BaseException:
            code = _code(context, grpc.StatusCode.UNKNOWN)
            raise
        finally:
            _count(method, code, time.perf_counter() - started)

    return call
