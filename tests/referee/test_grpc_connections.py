"""The gRPC server's bounds on its connections (issue #31, `arena.referee.connections`), over real sockets:
idle connections closed, a connection carrying a stream kept, connections over the cap closed at accept
(the Unix socket still served), streams per connection bounded, ping floods sent away."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.referee.connections import ConnectionLimits
from arena.referee.server import RefereeServer

from connections_support import closed, raw_connection  # isort: skip


@contextmanager
def served(limits: ConnectionLimits, unix: Path | None = None) -> Iterator[RefereeServer]:
    ready, stop = threading.Event(), threading.Event()
    box: list[RefereeServer] = []

    async def main() -> None:
        server = RefereeServer(tcp="127.0.0.1:0", unix_path=unix, connections=limits)
        await server.start()
        box.append(server)
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0.5)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(20), "the server did not start"
        yield box[0]
    finally:
        stop.set()
        thread.join(10)


def channel(target: str) -> grpc.Channel:
    """A channel with a connection of its own (channels to one target otherwise share one)."""
    return grpc.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])


def check(target: str) -> int:
    with channel(target) as ch:
        stub = health_pb2_grpc.HealthStub(ch)
        return stub.Check(health_pb2.HealthCheckRequest(), timeout=10, wait_for_ready=True).status


def held_watch(ch: grpc.Channel) -> grpc.Future:
    stream = health_pb2_grpc.HealthStub(ch).Watch(health_pb2.HealthCheckRequest(service=""))
    assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    return stream


def test_idle_connections_are_closed_and_a_connection_with_a_stream_is_kept():
    with served(ConnectionLimits(idle=0.5)) as server:
        target = f"127.0.0.1:{server.tcp_port}"
        idle = [raw_connection(server.tcp_port) for _ in range(50)]
        with channel(target) as busy:
            watch = held_watch(busy)
            try:
                assert closed(idle), "idle connections were left open"
                assert not watch.done()  # its connection carries a stream: never idle
                assert check(target) == health_pb2.HealthCheckResponse.SERVING  # new callers served
                assert not watch.done()
            finally:
                watch.cancel()
                for conn in idle:
                    conn.close()


def test_connections_over_the_cap_are_closed_at_accept_and_the_unix_socket_still_serves(tmp_path):
    unix = tmp_path / "referee.sock"
    with served(ConnectionLimits(idle=600, max_connections=4), unix) as server:
        held = [raw_connection(server.tcp_port) for _ in range(4)]
        try:
            over = raw_connection(server.tcp_port)
            assert closed([over]), "a connection over the cap was kept"
            assert not closed(held, within=0.5)  # the four within it stay open
            assert check(f"unix://{unix}") == health_pb2.HealthCheckResponse.SERVING  # a cap of its own
        finally:
            for conn in held:
                conn.close()
        # the places come back once those connections are gone
        assert check(f"127.0.0.1:{server.tcp_port}") == health_pb2.HealthCheckResponse.SERVING


def test_streams_on_one_connection_are_bounded_and_another_connection_is_served():
    with served(ConnectionLimits(idle=600, streams=2)) as server:
        target = f"127.0.0.1:{server.tcp_port}"
        with channel(target) as crowded:
            watches = [held_watch(crowded) for _ in range(2)]
            try:
                with pytest.raises(grpc.RpcError) as caught:  # the client queues its third stream
                    health_pb2_grpc.HealthStub(crowded).Check(health_pb2.HealthCheckRequest(), timeout=2)
                assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                assert check(target) == health_pb2.HealthCheckResponse.SERVING
            finally:
                for watch in watches:
                    watch.cancel()


def test_a_client_that_pings_without_data_is_sent_away():
    """gRPC's default ping policy, pinned: a client pinging every 100 ms on a quiet connection."""
    pinging = [
        ("grpc.use_local_subchannel_pool", 1),
        ("grpc.keepalive_time_ms", 100),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]
    with served(ConnectionLimits(idle=600)) as server:
        with grpc.insecure_channel(f"127.0.0.1:{server.tcp_port}", options=pinging) as ch:
            watch = health_pb2_grpc.HealthStub(ch).Watch(health_pb2.HealthCheckRequest(service=""))
            with pytest.raises(grpc.RpcError) as caught:
                for _ in watch:
                    pass
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            assert "ping" in (caught.value.details() or "").lower()
