"""gRPC calls in flight are bounded by the server itself, per address and in all (issue #31):
a caller over a bound gets RESOURCE_EXHAUSTED with retry-after, naming it, and the others are served.

The server is `arena serve`'s: a `RefereeServer` with the Arena service, health and reflection, and
the `InFlightLimit` interceptor. Callers come from their own loopback addresses through the bench's
forwarder (`arena.bench.child.Sources`); a health `Watch` stream is a real call that stays open.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.access.admin import AdminToken
from arena.bench.child import Sources
from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc
from arena.referee.server import RefereeServer
from arena.service.core import Service
from arena.service.grpc_servicer import ArenaService, add_arena_service
from arena.service.inflight import InFlight, InFlightLimit
from arena.store import Store

from abuse_support import open_limits  # isort: skip
from service_support import ADMIN  # isort: skip

A, B, C = "127.0.0.2", "127.0.0.3", "127.0.0.4"


@contextmanager
def served(gate: InFlight, home) -> Iterator[dict[str, str]]:
    """The server on a loopback port, and per source address the target that reaches it from there."""
    store = Store.open(f"sqlite:///{home / 'arena.db'}", home=home)
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=open_limits())
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, str] = {}

    async def main() -> None:
        server = RefereeServer(
            tcp="127.0.0.1:0",
            management=True,
            services=lambda s: add_arena_service(ArenaService(service), s),
            interceptors=[InFlightLimit(gate)],
        )
        await server.start()
        sources = Sources(f"127.0.0.1:{server.tcp_port}", [A, B, C])
        await sources.start()
        box.update({source: f"127.0.0.1:{port}" for source, port in sources.ports.items()})
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0.5)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(20), "the server did not start"
        yield box
    finally:
        stop.set()
        thread.join(10)
        store.close()


def held_watch(channel: grpc.Channel) -> grpc.Future:
    """A health Watch stream, open once its first answer has come: it holds a place until cancelled."""
    stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
    assert next(stream).status == health_pb2.HealthCheckResponse.SERVING
    return stream


def list_bots(channel: grpc.Channel) -> pb.ListBotsReply:
    return arena_pb2_grpc.ArenaStub(channel).ListBots(pb.ListBotsRequest(), timeout=10)


def refusal(channel: grpc.Channel) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        list_bots(channel)
    return caught.value


def test_calls_in_flight_are_bounded_per_address_and_in_all_and_others_are_served(tmp_path):
    gate = InFlight(total=4, per_address=2)
    with served(gate, tmp_path) as via:
        channels = {source: grpc.insecure_channel(target) for source, target in via.items()}
        try:
            a_streams = [held_watch(channels[A]) for _ in range(2)]
            over = refusal(channels[A])  # A's two places are taken
            assert over.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"from {A}, at most 2 at once per address" in over.details()
            assert ("retry-after", "1") in tuple(over.trailing_metadata() or ())
            list_bots(channels[B])  # another address is served meanwhile

            b_streams = [held_watch(channels[B]) for _ in range(2)]  # now 4 of 4 in all
            full = refusal(channels[C])
            assert full.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "its limit (--max-calls)" in full.details()
            assert gate.running == 4 and gate.refused == 2

            for stream in a_streams:
                stream.cancel()
            for _ in range(200):  # the cancelled streams give their places back
                if gate.running == 2:
                    break
                threading.Event().wait(0.05)
            list_bots(channels[C])
            list_bots(channels[A])
            for stream in b_streams:
                stream.cancel()
        finally:
            for channel in channels.values():
                channel.close()


def test_a_bots_play_stream_is_not_counted(tmp_path):
    """Seats' streams are bounded by the matches open and the join timeout, not by callers' places:
    a Play stream held open without a Join leaves the address's one place to a call."""
    from arena.proto import referee_pb2_grpc

    gate = InFlight(total=1, per_address=1)
    release = threading.Event()

    def nothing_yet() -> Iterator[object]:
        release.wait(20)
        return
        yield

    with served(gate, tmp_path) as via:
        with grpc.insecure_channel(via[A]) as channel:
            play = referee_pb2_grpc.RefereeStub(channel).Play(nothing_yet())
            try:
                health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
                list_bots(channel)  # the one place is free while the Play stream is open
                assert gate.refused == 0
                held = held_watch(channel)  # and a counted stream does take it
                assert refusal(channel).code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                held.cancel()
            finally:
                release.set()
                play.cancel()


def test_a_trusted_proxy_and_the_unix_socket_have_no_per_address_bound():
    gate = InFlight(total=5, per_address=1, trusted=lambda host: host == "192.0.2.7")
    assert gate.enter("192.0.2.7") is None and gate.enter("192.0.2.7") is None  # the proxy's many clients
    assert gate.enter("unix") is None and gate.enter("unix") is None  # local callers
    assert gate.enter("198.51.100.1") is None
    assert "at most 1 at once per address" in (gate.enter("198.51.100.1") or "")
    assert "its limit" in (gate.enter("198.51.100.2") or "")  # 5 of 5 in all, the trusted ones counted


def test_max_calls_help_names_the_calls_executors_size() -> None:
    """`--max-calls` defaults to `call_threads()`; its help names the figure, which must stay true."""
    from arena.cli.serve import serve
    from arena.service.builds import call_threads

    option = next(p for p in serve.params if p.name == "max_calls")
    assert f"the calls' threads, {call_threads()}" in (option.help or "")
