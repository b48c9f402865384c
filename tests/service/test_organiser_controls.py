"""The organiser's controls over a real `Arena` gRPC server (SQLite and PostgreSQL): each refused
to spectators and owners (PERMISSION_DENIED naming the command), each done for the admin and written
in the organiser's log with the caller's transport and address; a void shows publicly with its
reason, and `arena season verify` (the real CLI) agrees with the ratings it leaves; a suspended
owner still reads but cannot submit or challenge; the CLI drives the same calls with --server."""

from __future__ import annotations

import sys
from pathlib import Path

import grpc
import pytest
from click.testing import CliRunner
from service_support import ADMIN, Running
from sqlalchemy import select

from arena.cli import cli
from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.ladder.standings import verify_ratings
from arena.proto import arena_pb2 as pb
from arena.store.models import Match
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

# the engine-in-process executor of the ladder tests: real matches and replays, no sandbox
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ladder"))
import engine_play

ADMIN_CALLS = (
    ("PauseSeason", pb.SeasonRequest(name="s")),
    ("ResumeSeason", pb.SeasonRequest(name="s")),
    ("RequeueFailed", pb.RequeueFailedRequest(season="s")),
    ("VoidMatch", pb.VoidMatchRequest(match_id=1, reason="x")),
    ("RecomputeRatings", pb.SeasonRequest(name="s")),
    ("SuspendOwner", pb.SuspendOwnerRequest(name="bob")),
    ("ReinstateOwner", pb.SuspendOwnerRequest(name="bob")),
    ("ListWorkers", pb.ListWorkersRequest()),
    ("DrainWorker", pb.DrainWorkerRequest(worker="box")),
    ("UndrainWorker", pb.DrainWorkerRequest(worker="box")),
    ("ListAdminActions", pb.ListAdminActionsRequest()),
)


def _season(running: Running, tmp_path, matches: int = 6) -> None:
    store = running.service.store
    for name, owner, strategy in (("a1", "alice", "high"), ("b1", "bob", "low"), ("b2", "bob", "random")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner
        )
    create_season(store, "s", seed=5)
    start_season(store, "s")
    run_pool(
        SeasonRun(store, "s", launcher="local", matches=matches),
        engine_play.play,
        concurrency=1,
        threads=True,
    )


def _refused(call, request, metadata) -> str:
    with pytest.raises(grpc.RpcError) as err:
        call(request, metadata=metadata)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED, err.value.details()
    return err.value.details()


def test_spectators_and_owners_are_refused_every_control(arena_service: Running) -> None:
    stub = arena_service.stub()
    for md in ([], Running.auth(arena_service.tokens["alice"])):
        for method, request in ADMIN_CALLS:
            words = _refused(getattr(stub, method), request, md)
            assert "`arena " in words and "admin token" in words, (method, words)
    with arena_service.service.store.read() as s:
        from arena.store.audit import recent_actions

        assert recent_actions(s) == []  # nothing refused was done, nor logged


def test_the_admin_pauses_voids_recomputes_and_verify_agrees(arena_service: Running, tmp_path) -> None:
    _season(arena_service, tmp_path)
    stub, md = arena_service.stub(), Running.auth(ADMIN)
    store = arena_service.service.store

    assert stub.PauseSeason(pb.SeasonRequest(name="s"), metadata=md).paused
    listed = stub.ListSeasons(pb.ListSeasonsRequest()).seasons  # public: a spectator sees it
    assert [(x.name, x.paused) for x in listed] == [("s", True)]
    with pytest.raises(grpc.RpcError) as err:
        stub.PauseSeason(pb.SeasonRequest(name="nope"), metadata=md)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert not stub.ResumeSeason(pb.SeasonRequest(name="s"), metadata=md).paused

    with store.read() as s:
        target = s.scalars(select(Match).where(Match.status == "done", Match.winner.is_not(None))).first()
        assert target is not None
        target_id = target.id
    with pytest.raises(grpc.RpcError) as err:
        stub.VoidMatch(pb.VoidMatchRequest(match_id=target_id, reason=""), metadata=md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "reason" in err.value.details()
    shown = stub.VoidMatch(
        pb.VoidMatchRequest(match_id=target_id, reason="played on a broken build"), metadata=md
    )
    assert shown.void and shown.void_reason == "played on a broken build"
    public = [
        x for x in stub.ListMatches(pb.ListMatchesRequest(season="s", limit=50)).matches if x.id == target_id
    ]
    assert [(x.void, x.void_reason) for x in public] == [(True, "played on a broken build")]
    assert verify_ratings(store, "s") == []
    env = {
        "ARENA_DATABASE_URL": store.engine.url.render_as_string(hide_password=False),
        "ARENA_HOME": str(store.home),
    }
    out = CliRunner().invoke(cli, ["season", "verify", "s"], env=env)
    assert out.exit_code == 0 and "every stored rating equals" in out.output, out.output

    done = stub.RecomputeRatings(pb.SeasonRequest(name="s"), metadata=md)
    assert (done.season, done.results, done.changed_entries) == ("s", 5, 0)
    assert list(stub.RequeueFailed(pb.RequeueFailedRequest(season="s"), metadata=md).match_ids) == []

    actions = stub.ListAdminActions(pb.ListAdminActionsRequest(), metadata=md).actions
    assert [a.action for a in actions] == ["requeue", "recompute", "void", "resume", "pause"]
    assert all(a.actor == "grpc:admin@127.0.0.1" for a in actions)
    assert actions[2].target == f"match {target_id}" and actions[2].detail == "played on a broken build"


def test_a_suspended_owner_reads_but_cannot_submit_or_challenge(arena_service: Running, tmp_path) -> None:
    _season(arena_service, tmp_path, matches=2)
    stub, md = arena_service.stub(), Running.auth(ADMIN)
    bob = Running.auth(arena_service.tokens["bob"])
    info = stub.SuspendOwner(pb.SuspendOwnerRequest(name="bob", reason="shared a token"), metadata=md)
    assert info.suspended and info.suspension_reason == "shared a token"
    bots = {b.name: b.state for b in stub.ListBots(pb.ListBotsRequest(owner="bob")).bots}
    assert bots == {"b1": "suspended", "b2": "suspended"}
    assert stub.GetBotLogs(pb.GetBotLogsRequest(name="b1"), metadata=bob).name == "b1"  # still reads
    words = _refused(stub.Challenge, pb.ChallengeRequest(my_bot="b1", opponent="a1"), bob)
    assert "suspended" in words and "shared a token" in words
    header = pb.SubmitBotChunk(header=pb.SubmitBotHeader(name="b3", format="tar.gz", size=10))
    with pytest.raises(grpc.RpcError) as err:
        stub.SubmitBot(iter([header]), metadata=bob)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and "suspended" in err.value.details()
    with arena_service.service.store.read() as s:
        from arena.store.models import Entry

        active = {e.version.bot.name for e in s.scalars(select(Entry).where(Entry.active.is_(True)))}
    assert active == {"a1"}  # bob's bots are scheduled no more

    back = stub.ReinstateOwner(pb.SuspendOwnerRequest(name="bob"), metadata=md)
    assert not back.suspended
    bots = {b.name: b.state for b in stub.ListBots(pb.ListBotsRequest(owner="bob")).bots}
    assert bots == {"b1": "active", "b2": "active"}
    with pytest.raises(grpc.RpcError) as err:
        stub.SuspendOwner(pb.SuspendOwnerRequest(name="nobody"), metadata=md)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_the_cli_drives_the_controls_remotely(arena_service: Running, tmp_path) -> None:
    _season(arena_service, tmp_path, matches=2)
    remote = ["--server", arena_service.address, "--api-token", ADMIN]
    runner = CliRunner()

    def arena(*args: str, code: int = 0) -> str:
        out = runner.invoke(cli, [*args, *remote], env={"ARENA_SERVER": "", "ARENA_API_TOKEN": ""})
        assert out.exit_code == code, out.output
        return out.output

    assert "paused" in arena("season", "pause", "s")
    assert "resumed" in arena("season", "resume", "s")
    assert "no failed match" in arena("season", "requeue", "s")
    assert "2 results replayed" in arena("season", "recompute", "s")
    assert "suspended owner bob" in arena("owners", "suspend", "bob", "--reason", "late fees")
    assert "suspended" in arena("owners", "list")
    assert "reinstated owner bob" in arena("owners", "reinstate", "bob")
    assert "draining box9" in arena("workers", "drain", "box9", "--reason", "disk swap")
    assert "box9" in arena("workers", "list") and "disk swap" in arena("workers", "list")
    assert "takes matches again" in arena("workers", "undrain", "box9")
    assert "not drained" in arena("workers", "undrain", "box9", code=2)
    log = arena("admin", "log")
    assert "undrain" in log and "suspend-owner" in log and "grpc:admin@127.0.0.1" in log
    owner_only = ["--server", arena_service.address, "--api-token", arena_service.tokens["alice"]]
    out = runner.invoke(cli, ["season", "pause", "s", *owner_only])
    assert out.exit_code == 2 and "`arena season pause` is for the organiser" in out.output
