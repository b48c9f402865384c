"""Bots' `Play` streams that have not joined are bounded in all and per address (issue #31): a stream
over a bound gets RESOURCE_EXHAUSTED at once with retry-after, another address still joins and plays,
a joined seat gives its place back, a silent stream is dropped early, and the Unix socket (this
machine's own bots) is not counted.

The server is `arena serve`'s referee (`RefereeServer` with a `Joining` gate) on a Unix socket and a
loopback port; callers come from their own loopback addresses through the bench's forwarder
(`arena.bench.child.Sources`), as in test_abuse_connections.py.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.bench.child import Sources
from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.referee import MatchSpec, TimeControl
from arena.referee.joining import Joining
from arena.referee.match import MatchRunner
from arena.referee.server import RefereeServer
from arena.sdk import Bot, run

from abuse_support import until  # isort: skip

A, B = "127.0.0.2", "127.0.0.3"
TC = TimeControl(startup=20.0, move=30.0, bank=30.0)  # a joined seat that does not answer stays joined


@dataclass
class Served:
    server: RefereeServer
    via: dict[str, str]  # source address -> the target that reaches the server from there
    unix: str
    loop: asyncio.AbstractEventLoop

    def call(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(20)

    def new_match(self, **spec: Any) -> MatchRunner:
        async def create() -> MatchRunner:
            runner = self.server.create_match(MatchSpec(**spec))
            self.server.start_match(runner)
            return runner

        return self.call(create())

    def wait(self, runner: MatchRunner) -> Any:
        self.call(asyncio.wait_for(runner.done.wait(), 20))
        return runner.result


@contextmanager
def served(gate: Joining, home: Path) -> Iterator[Served]:
    ready, stop = threading.Event(), threading.Event()
    box: dict[str, Served] = {}

    async def main() -> None:
        server = RefereeServer(unix_path=home / "referee.sock", tcp="127.0.0.1:0", joining=gate)
        await server.start()
        sources = Sources(f"127.0.0.1:{server.tcp_port}", [A, B])
        await sources.start()
        via = {source: f"127.0.0.1:{port}" for source, port in sources.ports.items()}
        box["served"] = Served(server, via, f"unix://{home / 'referee.sock'}", asyncio.get_running_loop())
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await server.stop(0.5)

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(20), "the referee did not start"
        yield box["served"]
    finally:
        stop.set()
        thread.join(10)


class Stream:
    """A hand-driven Play stream: it sends what it is given (nothing, until told), reads replies."""

    def __init__(self, channel: grpc.Channel) -> None:
        self.out: queue.SimpleQueue = queue.SimpleQueue()
        self.replies = pbg.RefereeStub(channel).Play(iter(self.out.get, None), timeout=60)

    def join(self, token: str) -> None:
        self.out.put(pb.BotMessage(join=pb.Join(token=token, bot_name="raw", protocol_version=1)))

    def next(self, kind: str) -> Any:
        for message in self.replies:
            if message.WhichOneof("msg") == kind:
                return getattr(message, kind)
        raise AssertionError(f"the stream ended before a {kind}")

    def status(self) -> grpc.RpcError:
        with pytest.raises(grpc.RpcError) as caught:
            for _ in self.replies:
                pass
        return caught.value

    def close(self) -> None:
        self.out.put(None)
        self.replies.cancel()


class FirstLegal(Bot):
    name = "first"

    def play(self, view: Any) -> Any:
        return view.legal[0]


def play_both(address: str, runner: MatchRunner) -> list[Any]:
    """Both seats of `runner` played by SDK bots connecting to `address`; their results."""
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda t=token: results.append(run(FirstLegal(), address=address, token=t)))
        for token in runner.tokens
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_silent_play_streams_are_bounded_per_address_and_another_address_joins_and_plays(tmp_path):
    gate = Joining(total=8, per_address=3, trusted=lambda host: False)
    with served(gate, tmp_path) as arena:
        a = grpc.insecure_channel(arena.via[A])
        streams = [Stream(a) for _ in range(3)]
        try:
            until(lambda: gate.held == 3, "the three silent streams hold their places")
            over = Stream(a)
            refused = over.status()  # the fourth from A: refused at once, it sent nothing either
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"from {A} have not joined yet, at most 3 at once per address" in refused.details()
            assert ("retry-after", "1") in tuple(refused.trailing_metadata() or ())
            assert gate.held == 3 and gate.refused == 1

            runner = arena.new_match(seed=3, time_control=TimeControl(startup=20.0), rules=Rules(max_deals=1))
            results = play_both(arena.via[B], runner)  # B joins and plays meanwhile
            result = arena.wait(runner)
            assert list(result.verdicts) == ["OK", "OK"] and result.end_reason == "COMPLETED"
            assert [r.winner for r in results] == [result.winner] * 2
            assert gate.held == 3  # B's seats gave their places back on joining
        finally:
            for stream in streams:
                stream.close()
            a.close()
        until(lambda: gate.held == 0, "the cancelled streams give their places back")


def test_joined_seats_do_not_count_and_the_server_bound_holds_across_addresses(tmp_path):
    gate = Joining(total=3, per_address=2, trusted=lambda host: False)
    with served(gate, tmp_path) as arena:
        a, b = grpc.insecure_channel(arena.via[A]), grpc.insecure_channel(arena.via[B])
        runner = arena.new_match(seed=4, time_control=TC)
        seats = [Stream(a) for _ in range(2)]  # A's two places, then both join the match
        opened: list[Stream] = []
        try:
            for seat, token in zip(seats, runner.tokens, strict=True):
                seat.join(token)
            seats[0].next("welcome")  # both seats have joined: the match is on, the seats still open
            assert gate.held == 0  # neither counts any more

            opened = [Stream(a) for _ in range(2)] + [Stream(b)]  # A's 2 again, and 1 from B: 3 of 3
            until(lambda: gate.held == 3, "A's two and B's one silent stream hold their places")
            full = Stream(b).status()  # B holds 1 of its 2, but the server holds its 3
            assert full.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "its limit (--max-joining)" in full.details()
            assert not runner.done.is_set()  # the joined seats were open all along
        finally:
            for stream in [*seats, *opened]:
                stream.close()
            a.close()
            b.close()
        until(lambda: gate.held == 0, "every place is given back")


def test_a_silent_stream_is_dropped_after_the_short_timeout_and_gives_its_place_back(tmp_path):
    gate = Joining(total=4, per_address=1, trusted=lambda host: False, silent_timeout=0.3)
    with served(gate, tmp_path) as arena, grpc.insecure_channel(arena.via[A]) as a:
        for _ in range(2):  # the address's one place, taken again once the first stream is dropped
            status = Stream(a).status()
            assert status.code() == grpc.StatusCode.DEADLINE_EXCEEDED
            assert "no Join within 0.3 s" in status.details()
            until(lambda: gate.held == 0, "the dropped stream gives its place back")
        assert gate.refused == 0


def test_the_unix_socket_is_not_counted(tmp_path):
    gate = Joining(total=1, per_address=1, trusted=lambda host: False)
    with served(gate, tmp_path) as arena:
        local = grpc.insecure_channel(arena.unix)
        a = grpc.insecure_channel(arena.via[A])
        streams = [Stream(local) for _ in range(3)]  # this machine's bots, silent for now
        try:
            runner = arena.new_match(seed=6, time_control=TimeControl(startup=20.0), rules=Rules(max_deals=1))
            results = play_both(arena.unix, runner)  # and two more that join and play
            assert [r.winner for r in results] == [arena.wait(runner).winner] * 2
            assert gate.held == 0 and gate.refused == 0
            tcp = Stream(a)  # the server's one place is still there for a bot over TCP
            until(lambda: gate.held == 1, "the TCP stream holds the one place")
            tcp.close()
        finally:
            for stream in streams:
                stream.close()
            local.close()
            a.close()


def test_a_trusted_proxy_has_no_per_address_bound_but_counts_in_all():
    gate = Joining(total=3, per_address=1, trusted=lambda host: host == "192.0.2.7")
    assert gate.enter("192.0.2.7") is None and gate.enter("192.0.2.7") is None  # the proxy's clients
    assert gate.enter("198.51.100.1") is None
    assert "at most 1 at once per address" in (gate.enter("198.51.100.1") or "")
    assert "its limit (--max-joining)" in (gate.enter("192.0.2.7") or "")  # 3 of 3 in all
    assert Joining.counts("ipv4:192.0.2.7:5000") and not Joining.counts("unix:/run/referee.sock")
