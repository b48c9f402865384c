"""The referee against its manual, part 2: message sizes (16 KiB, then gRPC's own limits), Log lines
(cut, dropped, LOG_DROPPED once, kept until MatchResult), health and reflection on the operator's ports,
and a bot's own socket (real play_match remote seats). Part 1 and the quote check: test_conformance.py."""

from __future__ import annotations

import re
import time

import grpc
import pytest
from conformance import _log_of_size, seat_sockets, start
from wire import Wire, in_thread, play_out

from arena.referee.server import MAX_BOT_MESSAGE
from arena.referee.session import LogLimits


@pytest.fixture
def addr(referee):
    return referee.address("unix")


# -- message size --------------------------------------------------------------------------------------


def test_messages_up_to_the_cap_pass_and_one_byte_more_is_a_protocol_error(referee, addr):
    """'A message may be at most 16 KiB (16384 bytes); a bigger one ... PROTOCOL_ERROR whose detail says
    it was oversized.'"""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(_log_of_size(MAX_BOT_MESSAGE))
    a.send(_log_of_size(MAX_BOT_MESSAGE + 1))
    code, _ = play_out(a)
    result = referee.wait(runner)
    tb.join(30)
    assert len(runner.record.logs) == 1  # the one at the cap was taken (and cut to the line limit)
    assert result.verdicts[0] == "PROTOCOL_ERROR"
    assert "sent an oversized message: a message of 16385 bytes; the cap is 16384 bytes" in result.details[0]
    assert a.kinds()[-2:] == ["error", "match_result"] and code == grpc.StatusCode.INVALID_ARGUMENT


def test_a_message_over_grpcs_own_limit_is_refused_by_grpc(referee, addr):
    """'Over the port's gRPC limit (17 KiB on a bot's own socket, 4 MiB on arena serve's ports) gRPC
    refuses the message with RESOURCE_EXHAUSTED before the referee sees it: DISCONNECT or CRASH, with
    a detail that names the limit.'"""
    from arena.referee.server import GRPC_RECEIVE_CAP

    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(b"\x1a\x85\x80\x80\x02" + b"x" * (GRPC_RECEIVE_CAP + 5))  # a Log field of 4 MiB + 5 bytes
    code, details = a.finish()
    result = referee.wait(runner)
    tb.join(30)
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details
    assert result.verdicts[0] == "DISCONNECT"
    assert f"over gRPC's receive limit of {GRPC_RECEIVE_CAP} bytes" in result.details[0]


# -- logs ----------------------------------------------------------------------------------------------


def test_log_dropped_is_sent_once_with_the_count(referee, addr):
    """'LOG_DROPPED: sent once, when the referee first drops one of your lines, with the count so far.'"""
    runner = start(referee, log_limits=LogLimits(max_lines=5))
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    for i in range(20):
        a.log(f"line {i}")
    code, _ = play_out(a)
    referee.wait(runner)
    tb.join(30)
    dropped = [e for e in a.of("error") if e.code == "LOG_DROPPED"]
    assert len(dropped) == 1 and not dropped[0].fatal
    assert re.fullmatch(
        r"\d+ Log lines? dropped: the match's total of 5 lines is reached; .*", dropped[0].message
    )
    assert [x.text for x in runner.record.logs] == [f"line {i}" for i in range(5)]
    assert runner.record.stats[0].logs_dropped == 15 and code == grpc.StatusCode.OK


def test_long_log_lines_are_cut_and_counted(referee, addr):
    """'Lines longer than max_line_bytes are cut' (and counted in the replay)."""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.log("é" * 1000)  # 2000 bytes of UTF-8: cut at 1024 without splitting a character
    play_out(a)
    referee.wait(runner)
    tb.join(30)
    assert runner.record.logs[0].text == "é" * 512 and runner.record.stats[0].logs_truncated == 1


def test_logs_sent_until_match_result_are_kept(referee, addr):
    """'Log lines sent until you receive MatchResult are kept' — also one sent well after the last
    DealResult, while the MatchResult already waits unread (the referee reads on until the bot closes)."""
    runner = start(referee)
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    while (msg := a.recv()) is not None:
        kind = msg.WhichOneof("msg")
        if kind == "turn_request":
            a.action(msg.turn_request.turn_id, msg.turn_request.legal_cards[0])
        elif kind == "deal_result":
            time.sleep(0.2)  # the referee has sent the MatchResult by now
            a.log("after the last deal")
        elif kind == "match_result":
            a.half_close()
    referee.wait(runner)
    tb.join(30)
    assert [(x.seat, x.text) for x in runner.record.logs] == [(0, "after the last deal")]
    assert a.code == grpc.StatusCode.OK


# -- tooling (arena serve's ports; a bot's own socket serves Play only) --------------------------------


def test_health_check_watch_and_list_work_with_the_stock_client(referee):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    stub = health_pb2_grpc.HealthStub(grpc.insecure_channel(referee.address("tcp")))
    serving = health_pb2.HealthCheckResponse.SERVING
    for service in ("", "elfern.arena.v1.Referee", "elfern.arena.v1.Arena", "grpc.health.v1.Health"):
        assert stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status == serving
    with pytest.raises(grpc.RpcError) as info:
        stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    watch = stub.Watch(health_pb2.HealthCheckRequest(service="elfern.arena.v1.Referee"), timeout=10)
    assert next(watch).status == serving
    watch.cancel()
    listed = stub.List(health_pb2.HealthListRequest(), timeout=10).statuses
    assert {"", "elfern.arena.v1.Referee", "elfern.arena.v1.Arena", "grpc.health.v1.Health"} <= set(listed)
    assert all(v.status == serving for v in listed.values())


def test_reflection_v1alpha_works_with_the_stock_client(referee):
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    db = ProtoReflectionDescriptorDatabase(grpc.insecure_channel(referee.address("tcp")))
    services = set(db.get_services())
    assert {
        "elfern.arena.v1.Referee",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
    } <= services
    proto = db.FindFileContainingSymbol("elfern.arena.v1.Referee")
    assert proto.name.endswith("referee.proto") and "Play" in [m.name for m in proto.service[0].method]


def test_reflection_v1_answers_the_same_protocol(referee):
    """grpc.reflection.v1 (what grpcurl asks first) has the v1alpha messages under a new package name."""
    from grpc_reflection.v1alpha import reflection_pb2 as rpb

    channel = grpc.insecure_channel(referee.address("tcp"))
    info = channel.stream_stream(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        request_serializer=rpb.ServerReflectionRequest.SerializeToString,
        response_deserializer=rpb.ServerReflectionResponse.FromString,
    )
    asks = [
        rpb.ServerReflectionRequest(list_services=""),
        rpb.ServerReflectionRequest(file_containing_symbol="elfern.arena.v1.BotMessage"),
    ]
    listed, found = list(info(iter(asks), timeout=10))
    assert "elfern.arena.v1.Referee" in {s.name for s in listed.list_services_response.service}
    assert found.file_descriptor_response.file_descriptor_proto


# -- a bot's own socket (what arena play and the ladder give each seat) --------------------------------


@pytest.mark.parametrize("size", [17000, 17409])
def test_the_size_boundary_on_a_bots_own_socket(size):
    """Up to 17408 bytes the referee sees the message (PROTOCOL_ERROR, oversized); past it gRPC refuses it."""
    from arena.referee.botsocket import BOT_SOCKET_RECEIVE_CAP

    assert BOT_SOCKET_RECEIVE_CAP == 17408
    t, outcome, addresses, tokens = seat_sockets()
    a, b = Wire(addresses[0][0]), Wire(addresses[1][0])
    a.join(tokens[0])
    b.join(tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(_log_of_size(size))
    code, details = play_out(a)
    t.join(60)
    tb.join(30)
    out = outcome["out"]
    if size <= BOT_SOCKET_RECEIVE_CAP:
        assert out.verdicts[0] == "PROTOCOL_ERROR" and f"a message of {size} bytes" in out.verdict_details[0]
        assert code == grpc.StatusCode.INVALID_ARGUMENT
    else:
        # gRPC's core refuses it; the socket closes with the match, which the bot may see first
        assert code in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE), details
        assert out.verdicts[0] == "DISCONNECT"
        assert "over gRPC's receive limit of 17408 bytes" in out.verdict_details[0]


def test_a_bots_own_socket_serves_play_only():
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    t, outcome, addresses, tokens = seat_sockets()
    channel = grpc.insecure_channel(addresses[0][0])
    with pytest.raises(grpc.RpcError) as info:
        health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED
    wires = [Wire(addresses[s][0]) for s in (0, 1)]
    for w, tok in zip(wires, tokens, strict=True):
        w.join(tok)
    threads = [in_thread(play_out, w) for w in wires]
    t.join(60)
    for th in threads:
        th.join(30)
    assert outcome["out"].verdicts == ("OK", "OK")
