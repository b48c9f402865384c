"""`arena serve`'s referee holds only its open matches: finished ones are released once recorded,
open ones are capped (RESOURCE_EXHAUSTED), seats that never join expire after the start-up budget,
a record that cannot be written is reported (DATA_LOSS) and logged, and no handler failure reaches a
client as UNKNOWN. Real gRPC, real matches (seats that never join end them quickly)."""

from __future__ import annotations

import logging
from pathlib import Path

import grpc
import pytest

from arena.access.admin import AdminToken
from arena.proto import arena_pb2, arena_pb2_grpc
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.proto.codec import decode_record, encode_record
from arena.referee import TimeControl
from arena.referee.loop import run_sync
from arena.referee.management import ReplayDir
from arena.referee.server import RefereeServer

TOKEN = "server-memory-test-token-0123456789"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
QUICK = TimeControl(startup=0.2, move=1.0, bank=1.0).to_proto()  # nobody joins: over in 0.2 s


class Referee:
    def __init__(self, tmp: Path, **options) -> None:
        self.replays = ReplayDir(tmp / "replays")
        self.replays.prepare()
        self.fail_writes = False
        self.server = RefereeServer(
            tcp="127.0.0.1:0", management=True, admin_token=AdminToken.of(TOKEN, "test"),
            on_finished=self._write, **options,
        )  # fmt: skip
        run_sync(self.server.start())
        self.channel = grpc.insecure_channel(self.server.addresses[0])
        self.api = arena_pb2_grpc.ArenaStub(self.channel)

    def _write(self, runner) -> Path:
        if self.fail_writes:
            raise OSError(28, "No space left on device")
        return self.replays.write(runner.spec.match_id, encode_record(runner.record))

    def create(self, match_id: str = "") -> str:
        request = arena_pb2.CreateMatchRequest(match_id=match_id, time_control=QUICK)
        return self.api.CreateMatch(request, metadata=AUTH, timeout=30).match_id

    def get(self, match_id: str, wait: bool = True) -> arena_pb2.MatchStatus:
        return self.api.GetMatch(
            arena_pb2.GetMatchRequest(match_id=match_id, wait=wait), metadata=AUTH, timeout=30
        )

    def stop(self) -> None:
        self.channel.close()
        run_sync(self.server.stop(0.2), 30)


@pytest.fixture
def referee(tmp_path: Path):
    made: list[Referee] = []

    def make(**options) -> Referee:
        made.append(Referee(tmp_path / str(len(made)), **options))
        return made[-1]

    yield make
    for r in made:
        r.stop()


def test_unjoined_matches_expire_and_are_released_once_recorded(referee) -> None:
    r = referee(keep_finished=3)
    ids = [f"m{i}" for i in range(5)]
    for match_id in ids:  # one at a time: with only 3 remembered, an early one may be gone by its turn
        r.create(match_id)
        status = r.get(match_id)
        assert status.state == "OVER" and list(status.result.verdicts) == ["STARTUP_FAILED"] * 2
        assert decode_record(status.record).match_id == match_id  # read back from its replay file
    assert r.server.runners == {} and r.server.recorded == {}  # nothing of a finished match is held
    assert list(r.server.finished) == ids[-3:]  # only small summaries of the newest few
    assert all(f.record == b"" for f in r.server.finished.values())  # the record lives in its file
    with pytest.raises(grpc.RpcError) as info:
        r.get(ids[0])
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as info:  # a remembered id stays taken
        r.create(ids[-1])
    assert info.value.code() == grpc.StatusCode.ALREADY_EXISTS


def test_open_matches_beyond_the_limit_are_resource_exhausted(referee) -> None:
    r = referee(max_open=2)
    slow = arena_pb2.CreateMatchRequest(time_control=TimeControl(startup=30.0).to_proto())
    for _ in range(2):
        r.api.CreateMatch(slow, metadata=AUTH, timeout=30)
    with pytest.raises(grpc.RpcError) as info:
        r.api.CreateMatch(slow, metadata=AUTH, timeout=30)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "--max-open-matches" in info.value.details()
    assert len(r.server.runners) == 2


def test_a_record_that_cannot_be_written_is_data_loss_and_logged(referee, caplog) -> None:
    r = referee()
    r.fail_writes = True
    with caplog.at_level(logging.ERROR, logger="arena.referee.server"):
        match_id = r.create("lost-1")
        with pytest.raises(grpc.RpcError) as info:
            r.get(match_id)
    assert info.value.code() == grpc.StatusCode.DATA_LOSS
    assert "record could not be written" in info.value.details() and "No space left" in info.value.details()
    assert any("lost-1" in rec.getMessage() and "No space left" in rec.getMessage() for rec in caplog.records)


def test_a_failure_inside_play_is_internal_never_unknown(referee, monkeypatch, caplog) -> None:
    import arena.referee.server as server_module

    r = referee()
    created = r.api.CreateMatch(
        arena_pb2.CreateMatchRequest(time_control=TimeControl(startup=30.0).to_proto()),
        metadata=AUTH,
        timeout=30,
    )

    def broken(runner, seat):
        raise RuntimeError("claim fell over")

    monkeypatch.setattr(server_module, "check_claim", broken)  # a bug behind a real seat token
    stub = pbg.RefereeStub(r.channel)
    with caplog.at_level(logging.ERROR, logger="arena.referee.server"):
        with pytest.raises(grpc.RpcError) as info:
            list(stub.Play(iter([pb.BotMessage(join=pb.Join(token=created.tokens[0]))]), timeout=30))
    assert info.value.code() == grpc.StatusCode.INTERNAL, info.value.details()
    assert "claim fell over" not in info.value.details()  # the bot learns nothing of the referee's insides
    assert [rec for rec in caplog.records if "Play from" in rec.getMessage()]  # logged, with its traceback
