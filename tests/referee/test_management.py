"""The management service (CreateMatch, GetMatch) over real gRPC: the admin token, safe match ids, the
replays directory, bad rules, capped echoes, and no answer that is UNKNOWN."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import stat
import threading
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
from arena.referee.management import ReplayDir, UnsafeReplayPath
from arena.referee.server import RefereeServer
from arena.sdk import Bot, run

TOKEN = "management-test-token-0123456789"
AUTH = (("authorization", f"Bearer {TOKEN}"),)
TC = TimeControl(startup=20.0, move=1.0, bank=3.0)
# ids that name a path (or worse) instead of a file: each must be refused before anything is written
BAD_IDS = [
    "../x", "..", ".", "a/b", "a\\b", "/tmp/evil", "//etc/passwd", "x\x00y", "\x00", "a b", "x.replay",
    "ünïcode", "\u0661\u0662", "ｆｕｌｌ", "a\u200bb", "tab\t", "new\nline", "A" * 65, "-" * 200,
]  # fmt: skip


class Management:
    """An in-process `arena serve` referee with an admin token, writing replays as `arena serve` does."""

    def __init__(self, tmp: Path, token: AdminToken | None) -> None:
        self.replays = ReplayDir(tmp / "replays")
        self.replays.prepare()
        self.written: list[Path] = []
        self.server = RefereeServer(
            unix_path=tmp / "r.sock",
            tcp="127.0.0.1:0",
            management=True,
            admin_token=token,
            on_finished=self._write,
        )
        run_sync(self.server.start())
        self.address = self.server.addresses[1]
        self.channel = grpc.insecure_channel(self.address)
        self.api = arena_pb2_grpc.ArenaStub(self.channel)

    def _write(self, runner) -> None:
        self.written.append(self.replays.write(runner.spec.match_id, encode_record(runner.record)))

    def stop(self) -> None:
        self.channel.close()
        run_sync(self.server.stop(0.2), 30)


@pytest.fixture
def mgmt(tmp_path):
    m = Management(tmp_path, AdminToken.of(TOKEN, "test"))
    yield m
    m.stop()


def refused(call, request, metadata=AUTH) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as info:
        call(request, metadata=metadata, timeout=30)
    return info.value


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


class FirstLegal(Bot):
    def play(self, view):
        return view.legal[0]


# -- the admin token --------------------------------------------------------------------------------
WRONG = [
    (),  # no metadata
    (("authorization", "Bearer not-the-admin-token-at-all"),),
    (("authorization", TOKEN),),  # the token without its scheme
    (("authorization", f"Basic {TOKEN}"),),
    (("authorization", "Bearer "),),
    (("authorization", f"Bearer {TOKEN[:-1]}"),),
    (("authorization", f"Bearer {TOKEN}x"),),
    (("x-admin-token", TOKEN),),  # the right token under the wrong name
    (("authorization", "Bearer elf_" + "o" * 43),),  # an owner's API token is not the admin's
    (("authorization", f"Bearer {TOKEN}"), ("authorization", "Bearer wrong")),  # two: which one counts?
]


@pytest.mark.parametrize("metadata", WRONG, ids=[f"wrong{i}" for i in range(len(WRONG))])
def test_create_and_get_without_the_admin_token_are_unauthenticated(mgmt, metadata):
    created = mgmt.api.CreateMatch(arena_pb2.CreateMatchRequest(match_id="known"), metadata=AUTH)
    err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(), metadata)
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED and "authorization: Bearer" in err.details()
    # an existing match is not revealed either: the same answer as for any id, tokens never leave
    err = refused(mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id=created.match_id), metadata)
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    assert not any(t in err.details() for t in created.tokens)
    assert list(mgmt.server.runners) == ["known"]  # the refused CreateMatch made nothing


def test_a_seat_token_is_not_an_admin_token_and_the_admin_token_is_no_seat(mgmt):
    created = mgmt.api.CreateMatch(arena_pb2.CreateMatchRequest(time_control=TC.to_proto()), metadata=AUTH)
    for seat_token in created.tokens:
        err = refused(
            mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(), (("authorization", f"Bearer {seat_token}"),)
        )
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    # and the other way round: the admin token does not seat anyone in a match
    stream = pbg.RefereeStub(mgmt.channel).Play(iter([pb.BotMessage(join=pb.Join(token=TOKEN))]), timeout=30)
    with pytest.raises(grpc.RpcError) as info:
        list(stream)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_a_referee_without_an_admin_token_refuses_every_management_call(tmp_path):
    m = Management(tmp_path, None)
    try:
        for metadata in (AUTH, ()):
            err = refused(m.api.CreateMatch, arena_pb2.CreateMatchRequest(), metadata)
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED
            assert "no admin token" in err.details() and "ARENA_ADMIN_TOKEN" in err.details()
            err = refused(m.api.GetMatch, arena_pb2.GetMatchRequest(match_id="x"), metadata)
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        assert m.server.runners == {}
    finally:
        m.stop()


def test_undecodable_bytes_are_refused_by_name_and_only_after_the_token(mgmt):
    raw = mgmt.channel.unary_unary("/elfern.arena.v1.Arena/CreateMatch")
    for data in (b"\xff\xff\xff", bytes([0x22, 2, 0xFF, 0xFE])):  # corrupt wire; bad UTF-8 in match_id
        err = refused(raw, data, ())
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        err = refused(raw, data)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "not a valid elfern.arena.v1.CreateMatchRequest" in err.details()


# -- match ids and the replays directory -------------------------------------------------------------
@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda s: ascii(s)[:20])
def test_unsafe_match_ids_are_invalid_argument_and_nothing_is_written(mgmt, tmp_path, bad):
    before = tree(tmp_path)
    err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(match_id=bad))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and err.details().startswith("match_id: ")
    err = refused(mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id=bad))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and err.details().startswith("match_id: ")
    assert mgmt.server.runners == {} and tree(tmp_path) == before
    assert not Path("/tmp/evil.replay").exists()


def test_an_absolute_id_pointing_into_a_real_folder_writes_nothing_there(mgmt, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(match_id=str(outside / "x")))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(outside.iterdir()) == [] and mgmt.server.runners == {}


def test_a_ten_kilobyte_id_gets_an_error_that_echoes_at_most_200_characters(mgmt):
    for bad in ("A" * 10_000, "../" * 3_400, "é" * 10_000):
        for call, request in (
            (mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(match_id=bad)),
            (mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id=bad)),
            (mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(rules=[bad])),
            (mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(rules=[f"scoring={bad}"])),
        ):
            err = refused(call, request)
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and len(err.details()) <= 400
            unit = bad[:3] if bad.startswith("../") else bad[0]
            run_of_201 = ascii(unit)[1:-1] * (200 // len(unit) + 1)  # 201 input characters, as echoed
            assert run_of_201 not in err.details() and "characters" in err.details()


def test_empty_id_means_a_fresh_generated_one_with_the_default_clocks(mgmt):
    ids = [mgmt.api.CreateMatch(arena_pb2.CreateMatchRequest(), metadata=AUTH).match_id for _ in range(3)]
    assert len(set(ids)) == 3
    for match_id in ids:
        assert len(match_id) == 12 and all(c in "0123456789abcdef" for c in match_id)
        assert mgmt.server.runners[match_id].spec.time_control == TimeControl()
    err = refused(mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id=""))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "match_id: is empty" in err.details()


def test_the_replay_dir_refuses_unsafe_names_and_planted_links_itself(tmp_path):
    """The second defence: even an id that got past the service cannot leave the directory."""
    replays, outside = ReplayDir(tmp_path / "replays"), tmp_path / "outside"
    outside.mkdir()
    replays.prepare()
    for bad in ("../x", "..", "a/b", str(outside / "abs"), "x\x00", ""):
        with pytest.raises(UnsafeReplayPath):
            replays.write(bad, b"data")
    target = outside / "target"
    target.write_bytes(b"precious")
    (tmp_path / "replays" / "planted.replay").symlink_to(target)
    with pytest.raises(UnsafeReplayPath, match="resolves outside"):
        replays.write("planted", b"overwrite")
    assert target.read_bytes() == b"precious" and sorted(os.listdir(outside)) == ["target"]
    written = replays.write("ok-1", b"data")
    assert written == (tmp_path / "replays" / "ok-1.replay").resolve() and written.read_bytes() == b"data"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600  # a replay holds both bots' Log lines
    assert stat.S_IMODE((tmp_path / "replays").stat().st_mode) == 0o700
    assert sorted(os.listdir(tmp_path / "replays")) == ["ok-1.replay", "planted.replay"]  # no temp left


def test_the_replay_dir_refuses_when_it_is_moved_under_a_running_server(tmp_path):
    real, elsewhere = tmp_path / "real", tmp_path / "elsewhere"
    real.mkdir()
    elsewhere.mkdir()
    (tmp_path / "link").symlink_to(real)
    replays = ReplayDir(tmp_path / "link")
    assert replays.prepare() == real.resolve()
    assert replays.write("a", b"1").parent == real.resolve()
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(elsewhere)
    with pytest.raises(UnsafeReplayPath, match="resolves elsewhere"):
        replays.write("b", b"2")
    assert list(elsewhere.iterdir()) == [] and sorted(os.listdir(real)) == ["a.replay"]


# -- bad rules -------------------------------------------------------------------------------------
BAD_RULES = [
    ["flags=4294967296"], ["max_deals=4294967296"], ["flags=10001"], ["max_deals=10001"], ["flags=99999999999999999999999"], ["flags=0"],
    ["flags=-1"], ["flags=1.5"], ["flags="], ["flags=1e3"], ["max_deals=0"], ["hand_size=7"],
    ["hand_size=true"], ["trumps=maybe"], ["scoring=nope"], ["deck=tarot"], ["noequals"], ["=x"],
    ["colour=red"], ["flags=" + "9" * 5000], ["scoring=tendler"] * 33, ["flags=\x00"],
]  # fmt: skip


@pytest.mark.parametrize("rules", BAD_RULES, ids=lambda r: ascii(r[0])[:24])
def test_bad_rules_are_invalid_argument_naming_the_field(mgmt, rules):
    err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(rules=rules))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    assert err.details().startswith("rules: ") and len(err.details()) <= 400
    assert mgmt.server.runners == {}


def test_flags_beyond_uint32_are_invalid_argument_naming_the_bound(mgmt):
    err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(rules=["flags=4294967296"]))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (
        err.details()
        == "rules: rules option flags=4294967296 is invalid; allowed: an integer from 1 to 10000"
    )


# -- no UNKNOWN, ever ---------------------------------------------------------------------------------
def test_hostile_requests_get_named_statuses_never_unknown(mgmt):
    rng = random.Random(11)
    alphabet = "aZ09_-./\\\x00 é\u200b=,:;\n" + "".join(map(chr, range(0x20, 0x7F)))
    keys = ["flags", "max_deals", "hand_size", "scoring", "trumps", "deck", "standoff", "", "x"]
    codes = set()
    for i in range(150):
        match_id = "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 8, 64, 65, 300])))
        rules = [
            f"{rng.choice(keys)}={rng.choice(['', '1', '-1', '4294967296', 'true', 'tendler', 'é' * 70])}"
            for _ in range(rng.choice([0, 1, 3]))
        ]
        tc = pb.TimeControl(
            startup_ms=rng.choice([0, 1, 20_000, 2**32 - 1]), move_ms=rng.choice([0, 1, 2**32 - 1])
        )
        request = arena_pb2.CreateMatchRequest(
            match_id=match_id, rules=rules, seed=rng.getrandbits(64), time_control=tc
        )
        try:
            mgmt.api.CreateMatch(request, metadata=AUTH, timeout=30)
            codes.add(grpc.StatusCode.OK)
        except grpc.RpcError as exc:
            assert exc.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.ALREADY_EXISTS), (
                i, exc.code(), exc.details())  # fmt: skip
            assert len(exc.details()) <= 400
            codes.add(exc.code())
    assert grpc.StatusCode.OK in codes and grpc.StatusCode.INVALID_ARGUMENT in codes


def test_a_failure_inside_the_servicer_is_internal_and_logged_not_unknown(mgmt, monkeypatch, caplog):
    def broken(spec, *args, **kwargs):
        raise RuntimeError("the store fell over")

    monkeypatch.setattr(mgmt.server, "create_match", broken)
    with caplog.at_level(logging.ERROR, logger="arena.referee.management"):
        err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest())
    assert err.code() == grpc.StatusCode.INTERNAL and "fell over" not in err.details()
    assert "CreateMatch failed inside the referee" in err.details()
    assert any("the store fell over" in (r.exc_text or str(r.exc_info)) for r in caplog.records)
    mgmt.server.runners["broken"] = object()  # a registry entry that is no match runner
    try:
        err = refused(mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id="broken"))
    finally:
        del mgmt.server.runners["broken"]
    assert err.code() == grpc.StatusCode.INTERNAL and "GetMatch failed" in err.details()


# -- the right token, end to end ---------------------------------------------------------------------
def test_the_admin_token_creates_a_match_that_two_bots_play_and_the_replay_lands(mgmt, tmp_path):
    created = mgmt.api.CreateMatch(
        arena_pb2.CreateMatchRequest(rules=["max_deals=2"], seed=11, match_id="api-1", time_control=TC.to_proto()),
        metadata=(("authorization", f"bearer {TOKEN}"),),  # the scheme is case-insensitive
    )  # fmt: skip
    assert created.match_id == "api-1" and len(set(created.tokens)) == 2
    assert mgmt.api.GetMatch(arena_pb2.GetMatchRequest(match_id="api-1"), metadata=AUTH).state == "WAITING"
    err = refused(mgmt.api.CreateMatch, arena_pb2.CreateMatchRequest(match_id="api-1"))
    assert err.code() == grpc.StatusCode.ALREADY_EXISTS
    threads = [threading.Thread(target=run, args=(FirstLegal(), mgmt.address, t)) for t in created.tokens]
    for t in threads:
        t.start()
    status = mgmt.api.GetMatch(
        arena_pb2.GetMatchRequest(match_id="api-1", wait=True), metadata=AUTH, timeout=60
    )
    for t in threads:
        t.join(10)
    assert status.state == "OVER" and list(status.result.verdicts) == ["OK", "OK"]
    record = decode_record(status.record)
    assert record.match_id == "api-1" and record.seed == 11 and len(record.deals) == 2
    run_sync(settle(mgmt.server))  # on_finished runs just after the match task's end
    assert [p.name for p in mgmt.written] == ["api-1.replay"]
    assert decode_record((tmp_path / "replays" / "api-1.replay").read_bytes()).match_id == "api-1"


async def settle(server: RefereeServer) -> None:
    """Wait for every started match's task, on_finished included."""
    tasks = list(server._tasks)
    if tasks:
        await asyncio.wait(tasks)


def test_get_match_of_an_unknown_id_is_not_found(mgmt):
    err = refused(mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id="nope"))
    assert err.code() == grpc.StatusCode.NOT_FOUND and err.details().startswith(
        "no match nope on this referee"
    )


def test_a_record_over_the_grpc_limit_comes_from_get_match_in_bounded_pieces(mgmt, tmp_path, chatty_record):
    """GetMatch's record, in pieces of at most 1 MiB (issue #31 §5): a match whose replay file holds a
    chatty bot's logs (over 4 MiB compressed, more than a client's default receive limit) is read whole."""
    from arena.proto.pieces import PIECE, reassemble

    def write_chatty(runner) -> Path:
        return mgmt.replays.write(runner.spec.match_id, chatty_record(encode_record(runner.record), (0,), 6))

    mgmt.server.on_finished = write_chatty
    created = mgmt.api.CreateMatch(
        arena_pb2.CreateMatchRequest(rules=["max_deals=1"], match_id="long", time_control=TC.to_proto()),
        metadata=AUTH,
    )
    threads = [threading.Thread(target=run, args=(FirstLegal(), mgmt.address, t)) for t in created.tokens]
    for t in threads:
        t.start()
    sizes: list[int] = []

    def fetch(offset: int) -> arena_pb2.MatchStatus:
        status = mgmt.api.GetMatch(
            arena_pb2.GetMatchRequest(match_id="long", wait=True, offset=offset), metadata=AUTH, timeout=60
        )
        assert status.state == "OVER" and list(status.result.verdicts) == ["OK", "OK"]
        sizes.append(status.ByteSize())
        return status

    whole = reassemble(fetch)
    for t in threads:
        t.join(10)
    on_disk = (tmp_path / "replays" / "long.replay").read_bytes()
    assert whole == on_disk and len(whole) > 4 * 1024 * 1024
    assert len(sizes) == -(-len(whole) // PIECE) and max(sizes) <= PIECE + 100, sizes
    assert decode_record(whole).logs[0].text.startswith("chatty seat 0 ")
    err = refused(mgmt.api.GetMatch, arena_pb2.GetMatchRequest(match_id="long", offset=len(whole)))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith("offset: the record is")
