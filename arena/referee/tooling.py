"""Health checking and server reflection for the operator's ports, as stock clients expect them.

grpcio-health-checking's servicer answers `Check` and `Watch` but not `List` (added to health.proto
later), and grpcio-reflection serves only `grpc.reflection.v1alpha`, while grpcurl and newer clients
ask `grpc.reflection.v1` first. The two reflection protocols are the same messages under another
package name, so the v1alpha servicer answers both; `List` reads the statuses the servicer keeps.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2

HEALTH_SERVICE = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
REFLECTION_V1ALPHA = reflection.SERVICE_NAME  # grpc.reflection.v1alpha.ServerReflection
REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


class HealthServicer(health.aio.HealthServicer):
    """The stock asyncio servicer plus `List`: every service with a status, in one snapshot."""

    async def List(  # the gRPC method's name
        self, request: health_pb2.HealthListRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthListResponse:
        out = health_pb2.HealthListResponse()
        for name, status in sorted(self._server_status.items()):
            out.statuses[name].status = status
        return out


def add_tooling(server: grpc.aio.Server, services: Iterable[str], health_servicer: HealthServicer) -> None:
    """Register health (Check, Watch, List) and reflection v1 and v1alpha; `services` are listed by
    reflection next to these three."""
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [*services, HEALTH_SERVICE, REFLECTION_V1, REFLECTION_V1ALPHA]
    servicer = reflection.aio.ReflectionServicer(names)
    info = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    for name in (REFLECTION_V1, REFLECTION_V1ALPHA):
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(name, {"ServerReflectionInfo": info}),)
        )
