"""The referee server over real gRPC, on both a Unix socket and TCP: full matches between SDK bots,
token rules, stale turns, health and reflection, size caps, malformed messages, graceful shutdown."""

from __future__ import annotations

import queue
import threading

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.referee import TimeControl
from arena.sdk import Bot, run

TRANSPORTS = ["unix", "tcp"]
TC = TimeControl(startup=20.0, move=1.0, bank=3.0)


class FirstLegal(Bot):
    name = "first"

    def play(self, view):
        return view.legal[0]


class Raw:
    """A hand-driven bot stream: send messages, read replies, see the final status."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.out: queue.SimpleQueue = queue.SimpleQueue()
        self.backlog: list[pb.RefereeMessage] = []
        self.responses = pbg.RefereeStub(self.channel).Play(
            iter(self.out.get, None), wait_for_ready=True, timeout=30
        )

    def send(self, **msg) -> None:
        self.out.put(pb.BotMessage(**msg))

    def join(self, token: str, version: int = 1) -> None:
        self.send(join=pb.Join(token=token, bot_name="raw", protocol_version=version))

    def next(self, kind: str) -> pb.RefereeMessage:
        """The next message of `kind`; others are kept for later calls, in order."""
        for i, msg in enumerate(self.backlog):
            if msg.WhichOneof("msg") == kind:
                return getattr(self.backlog.pop(i), kind)
        for msg in self.responses:
            if msg.WhichOneof("msg") == kind:
                return getattr(msg, kind)
            self.backlog.append(msg)
        raise AssertionError(f"stream ended before a {kind}")

    def status(self) -> grpc.RpcError:
        with pytest.raises(grpc.RpcError) as info:
            for _ in self.responses:
                pass
        return info.value

    def close(self) -> None:
        self.out.put(None)
        self.channel.close()


def play_sdk(address: str, token: str, results: list) -> None:
    """The SDK bot in a thread. Its one-line exit (a seat joining a match that already ended) is kept
    in `results` rather than escaping the thread: the tests that expect a result then fail on it."""
    try:
        results.append(run(FirstLegal(), address=address, token=token))
    except SystemExit as exc:
        results.append(exc)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_full_match_between_sdk_bots(referee, transport):
    runner = referee.new_match(seed=9, time_control=TC, rules=Rules(flags=2))
    results: list = []
    threads = [
        threading.Thread(target=play_sdk, args=(referee.address(transport), tok, results))
        for tok in runner.tokens
    ]
    for t in threads:
        t.start()
    result = referee.wait(runner)
    for t in threads:
        t.join(10)
    assert list(result.verdicts) == ["OK", "OK"] and result.end_reason == "COMPLETED"
    assert max(result.flags) >= 2 and result.winner in (0, 1)
    assert [r.winner for r in results] == [result.winner, result.winner]  # both bots were told
    # nobody registered these seats: the record says "remote", and keeps what the bots said apart
    assert [(p.name, p.self_reported_name) for p in runner.record.players] == [("remote", "first")] * 2


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_token_rules_give_clear_statuses_and_never_break_the_server(referee, transport):
    addr = referee.address(transport)
    runner = referee.new_match(seed=1, time_control=TC)
    wrong = Raw(addr)
    wrong.join("not-a-token")
    err = wrong.status()
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and "unknown seat token" in err.details()

    early = Raw(addr)
    early.send(action=pb.Action(turn_id=1, card="AS"))
    err = early.status()
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and "first message must be Join" in err.details()

    old = Raw(addr)
    old.join(runner.tokens[0], version=2)
    err = old.status()
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION and "protocol_version 2" in err.details()

    first = Raw(addr)
    first.join(runner.tokens[0])
    # wait until the referee has taken the first Join, then try the same token again
    results: list = []
    t = threading.Thread(target=play_sdk, args=(addr, runner.tokens[1], results))
    t.start()
    first.next("welcome")
    second = Raw(addr)
    second.join(runner.tokens[0])
    err = second.status()
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and "already used" in err.details()
    # the first stream still plays: answer one turn, then drop out
    first.close()
    result = referee.wait(runner)
    t.join(10)
    assert result.verdicts[1] == "OK" and result.verdicts[0] == "DISCONNECT"
    health = health_pb2_grpc.HealthStub(grpc.insecure_channel(addr))
    assert (
        health.Check(health_pb2.HealthCheckRequest(service="")).status
        == health_pb2.HealthCheckResponse.SERVING
    )


def test_stale_and_unknown_turn_ids_are_rejected_not_applied(referee):
    addr = referee.address("unix")
    runner = referee.new_match(seed=2, time_control=TC)
    results: list = []
    raw = Raw(addr)
    raw.join(runner.tokens[0])
    t = threading.Thread(target=play_sdk, args=(addr, runner.tokens[1], results))
    t.start()
    raw.next("welcome")
    raw.send(action=pb.Action(turn_id=999, card="AS"))  # before any turn of ours
    err = raw.next("error")
    assert err.code == "STALE_TURN" and not err.fatal and err.turn_id == 999
    for _ in range(3):
        req = raw.next("turn_request")
        raw.send(action=pb.Action(turn_id=req.turn_id - 1, card=req.legal_cards[0]))  # an old id
        assert raw.next("error").code == "STALE_TURN"
        raw.send(action=pb.Action(turn_id=req.turn_id, card=req.legal_cards[0]))
        raw.send(action=pb.Action(turn_id=req.turn_id, card=req.legal_cards[0]))  # answered twice
        assert raw.next("error").code == "STALE_TURN"
    raw.close()
    referee.wait(runner)
    t.join(10)
    plays = [p for d in runner.record.deals for p in d.plays if p.seat == 0]
    assert len(plays) == 3  # only the answers to open turns were applied
    assert runner.record.stats[0].stale_actions == 7


def test_health_and_reflection_for_stock_tools(referee):
    channel = grpc.insecure_channel(referee.address("tcp"))
    health = health_pb2_grpc.HealthStub(channel)
    ok = health_pb2.HealthCheckResponse.SERVING
    assert health.Check(health_pb2.HealthCheckRequest(service="elfern.arena.v1.Referee")).status == ok
    refl = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = list(
        refl.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    )
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"elfern.arena.v1.Referee", "elfern.arena.v1.Arena", "grpc.health.v1.Health"} <= names


def _raw_bytes_call(address: str, payloads: list[bytes]):
    channel = grpc.insecure_channel(address)
    call = channel.stream_stream(
        "/elfern.arena.v1.Referee/Play",
        request_serializer=lambda b: b,
        response_deserializer=pb.RefereeMessage.FromString,
    )
    return channel, call(iter(payloads), timeout=30)


@pytest.mark.parametrize("attack", ["oversize", "huge", "garbage"])
def test_oversize_or_malformed_messages_are_protocol_errors(referee, attack):
    """Over our 16 KiB cap (20 KB), 1 MiB + 1 KiB (which gRPC itself used to refuse), or not
    a BotMessage at all: each is the sender's PROTOCOL_ERROR, never a DISCONNECT."""
    addr = referee.address("unix")
    runner = referee.new_match(seed=2, time_control=TC)
    results: list = []
    t = threading.Thread(target=play_sdk, args=(addr, runner.tokens[1], results))
    t.start()
    join = pb.BotMessage(join=pb.Join(token=runner.tokens[0], protocol_version=1)).SerializeToString()
    sizes = {"oversize": 20000, "huge": (1 << 20) + 1024}
    bad = (
        pb.BotMessage(log=pb.Log(text="x" * sizes[attack])).SerializeToString()
        if attack in sizes
        else b"\xff\xff\xff\xff\x0f\x01"
    )
    release = threading.Event()

    def payloads():
        yield join
        yield bad
        release.wait(20)

    channel, responses = _raw_bytes_call(addr, payloads())
    try:
        for _ in responses:
            pass
    except grpc.RpcError:
        pass  # a message that does not parse makes gRPC end the stream with an error status
    result = referee.wait(runner)
    release.set()
    t.join(10)
    channel.close()
    assert result.verdicts[0] == "PROTOCOL_ERROR", list(result.details)
    assert result.verdicts[1] == "OK" and result.winner == 1
    if attack in sizes:
        assert f"a message of {len(bad)} bytes; the cap is 16384" in result.details[0]


def test_graceful_shutdown_ends_matches_in_flight(referee):
    addr = referee.address("unix")
    runner = referee.new_match(seed=3, time_control=TimeControl(startup=20.0, move=60.0, bank=60.0))
    a, b = Raw(addr), Raw(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    a.next("welcome")
    b.next("welcome")  # both joined; whoever is on move now thinks "forever"
    referee.stop(grace=2.0)
    result = runner.result
    assert result.end_reason == "SHUTDOWN" and result.void and result.winner == -1
    assert list(result.verdicts) == ["OK", "OK"]
    assert a.next("match_result").end_reason == "SHUTDOWN"
    assert b.next("match_result").end_reason == "SHUTDOWN"
    assert runner.record.result.end_reason == "SHUTDOWN"
