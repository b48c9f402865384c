"""The management API over real gRPC: every refusal has its status, and the journeys' calls work."""

from __future__ import annotations

import grpc
import pytest
from service_support import ADMIN, Running, build_bundle, bundle_archive, gated_build

from arena.access.owners import revoke_owner
from arena.proto import arena_pb2 as pb
from arena.proto import referee_pb2


def _code(call, *args, **kwargs) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call(*args, **kwargs)
    return err.value.code()


def _chunks(name: str, data: bytes, fmt: str = "tar.gz", size: int = 0, chunk: int = 64 * 1024):
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format=fmt, size=size))
    for i in range(0, len(data), chunk):
        yield pb.SubmitBotChunk(data=data[i : i + chunk])


def test_spectators_read_but_cannot_act(arena_service: Running) -> None:
    stub = arena_service.stub()
    assert stub.ListBots(pb.ListBotsRequest()).bots == []
    assert stub.ListSeasons(pb.ListSeasonsRequest()).seasons == []
    assert _code(stub.CreateSeason, pb.CreateSeasonRequest(name="s")) == grpc.StatusCode.PERMISSION_DENIED
    assert _code(stub.ListOwners, pb.ListOwnersRequest()) == grpc.StatusCode.PERMISSION_DENIED
    assert (
        _code(stub.Challenge, pb.ChallengeRequest(my_bot="a", opponent="b"))
        == grpc.StatusCode.PERMISSION_DENIED
    )
    assert _code(stub.SubmitBot, _chunks("x", b"123")) == grpc.StatusCode.PERMISSION_DENIED


def test_bad_wrong_and_revoked_tokens_are_unauthenticated(arena_service: Running) -> None:
    stub = arena_service.stub()
    alice = arena_service.tokens["alice"]
    for token in ("elf_wrong", alice[:-1] + ("x" if alice[-1] != "x" else "y"), "not-even-a-token"):
        md = Running.auth(token)
        assert _code(stub.ListBots, pb.ListBotsRequest(), metadata=md) == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as err:
        stub.ListBots(pb.ListBotsRequest(), metadata=Running.auth("elf_wrongwrongwrong"))
    assert "elf_wron…" in err.value.details() and "elf_wrongwrongwrong" not in err.value.details()
    assert stub.ListBots(pb.ListBotsRequest(), metadata=Running.auth(alice)).bots == []
    revoke_owner(arena_service.service.store, "alice")
    assert (
        _code(stub.ListBots, pb.ListBotsRequest(), metadata=Running.auth(alice))
        == grpc.StatusCode.UNAUTHENTICATED
    )


def test_owner_token_is_refused_admin_calls(arena_service: Running) -> None:
    stub = arena_service.stub()
    md = Running.auth(arena_service.tokens["alice"])
    for call, req in (
        (stub.CreateSeason, pb.CreateSeasonRequest(name="s")),
        (stub.StartSeason, pb.SeasonRequest(name="s")),
        (stub.FreezeSeason, pb.SeasonRequest(name="s")),
        (stub.CloseSeason, pb.SeasonRequest(name="s")),
        (stub.SuspendBot, pb.SuspendBotRequest(name="x")),
        (stub.ReinstateBot, pb.SuspendBotRequest(name="x")),
        (stub.ListOwners, pb.ListOwnersRequest()),
        (stub.AddOwner, pb.OwnerRequest(name="carol")),
        (stub.RotateOwner, pb.OwnerRequest(name="bob")),
        (stub.RevokeOwner, pb.OwnerRequest(name="bob")),
    ):
        assert _code(call, req, metadata=md) == grpc.StatusCode.PERMISSION_DENIED, call


def test_admin_runs_seasons_and_sees_owners(arena_service: Running) -> None:
    stub = arena_service.stub()
    md = Running.auth(ADMIN)
    made = stub.CreateSeason(
        pb.CreateSeasonRequest(
            name="autumn",
            rules=["flags=1"],
            duplicate=True,
            time_control=referee_pb2.TimeControl(move_ms=500),
        ),
        metadata=md,
    )
    assert made.status == "draft" and made.duplicate and list(made.rules) == ["flags=1"]
    assert made.time_control.move_ms == 500
    assert stub.StartSeason(pb.SeasonRequest(name="autumn"), metadata=md).status == "running"
    assert _code(stub.CreateSeason, pb.CreateSeasonRequest(name="autumn"), metadata=md) == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    assert _code(stub.StartSeason, pb.SeasonRequest(name="nope"), metadata=md) == grpc.StatusCode.NOT_FOUND
    bad = pb.CreateSeasonRequest(name="b", rules=["flags=4294967296"])
    with pytest.raises(grpc.RpcError) as err:
        stub.CreateSeason(bad, metadata=md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "rules" in err.value.details()
    long_name = pb.CreateSeasonRequest(name="n" * 10_000)
    with pytest.raises(grpc.RpcError) as err:
        stub.CreateSeason(long_name, metadata=md)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and len(err.value.details()) < 400
    owners = stub.ListOwners(pb.ListOwnersRequest(), metadata=md).owners
    assert [o.name for o in owners] == ["alice", "bob"]
    assert all(o.token_prefix.startswith("elf_") and len(o.token_prefix) <= 8 for o in owners)
    assert stub.FreezeSeason(pb.SeasonRequest(name="autumn"), metadata=md).status == "frozen"


def test_submit_streams_builds_and_guards_names(arena_service: Running, repo_root) -> None:
    stub = arena_service.stub()
    alice, bob = (Running.auth(arena_service.tokens[n]) for n in ("alice", "bob"))
    data = bundle_archive(repo_root / "sample_bots" / "python" / "random")
    done = stub.SubmitBot(_chunks("alicebot", data, size=len(data)), metadata=alice)
    assert done.new and done.version.number == 1 and done.version.build_ok
    again = stub.SubmitBot(_chunks("alicebot", data), metadata=alice)
    assert not again.new and again.version.number == 1
    assert _code(stub.SubmitBot, _chunks("alicebot", data), metadata=bob) == grpc.StatusCode.PERMISSION_DENIED
    listed = stub.ListBots(pb.ListBotsRequest(owner="alice")).bots
    assert [(b.name, b.owner, b.state) for b in listed] == [("alicebot", "alice", "active")]
    assert _code(stub.SubmitBot, _chunks("../evil", data), metadata=alice) == grpc.StatusCode.INVALID_ARGUMENT
    assert (
        _code(stub.SubmitBot, _chunks("x", data, fmt="rar"), metadata=alice)
        == grpc.StatusCode.INVALID_ARGUMENT
    )
    assert (
        _code(stub.SubmitBot, _chunks("x", b"not an archive"), metadata=alice)
        == grpc.StatusCode.INVALID_ARGUMENT
    )
    no_header = iter([pb.SubmitBotChunk(data=data)])
    assert _code(stub.SubmitBot, no_header, metadata=alice) == grpc.StatusCode.INVALID_ARGUMENT
    assert _code(stub.RetireBot, pb.RetireBotRequest(name="alicebot"), metadata=bob) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    assert _code(stub.GetBotLogs, pb.GetBotLogsRequest(name="alicebot"), metadata=bob) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    assert _code(stub.GetBotLogs, pb.GetBotLogsRequest(name="alicebot")) == grpc.StatusCode.PERMISSION_DENIED
    logs = stub.GetBotLogs(pb.GetBotLogsRequest(name="alicebot"), metadata=alice)
    assert [b.version for b in logs.builds] == [1]


def test_upload_over_the_cap_is_cut_off_while_streaming(arena_service: Running) -> None:
    """The server refuses as soon as the bytes pass the cap; the client's remaining chunks are never read."""
    arena_service.service.upload_cap = 256 * 1024
    sent = []

    def endless():
        yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name="big", format="tar.gz"))
        for i in range(10_000):  # 640 MiB if it were all read
            sent.append(i)
            yield pb.SubmitBotChunk(data=b"\0" * 65536)

    md = Running.auth(arena_service.tokens["alice"])
    assert _code(arena_service.stub().SubmitBot, endless(), metadata=md) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert len(sent) < 1000  # gRPC flow control stops the client long before it sends everything
    declared = _chunks("big", b"x", size=10**9)
    assert _code(arena_service.stub().SubmitBot, declared, metadata=md) == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_challenges_are_owned_unrated_and_rate_limited(arena_service: Running, repo_root) -> None:
    from arena.access.ratelimit import Budget

    stub = arena_service.stub()
    alice, bob = (Running.auth(arena_service.tokens[n]) for n in ("alice", "bob"))
    data = bundle_archive(repo_root / "sample_bots" / "python" / "random")
    stub.SubmitBot(_chunks("a1", data), metadata=alice)
    stub.SubmitBot(_chunks("b1", data), metadata=bob)
    made = stub.Challenge(pb.ChallengeRequest(my_bot="a1", opponent="b1", deals=3), metadata=alice).match
    assert made.kind == "challenge" and made.status == "queued" and list(made.players) == ["a1@1", "b1@1"]
    assert len(made.commitment) == 64 and not made.has_seed and made.requested_by == "alice"
    assert _code(stub.Challenge, pb.ChallengeRequest(my_bot="b1", opponent="a1"), metadata=alice) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    assert _code(stub.Challenge, pb.ChallengeRequest(my_bot="a1", opponent="zz"), metadata=alice) == (
        grpc.StatusCode.NOT_FOUND
    )
    assert _code(stub.Challenge, pb.ChallengeRequest(my_bot="a1", opponent="a1"), metadata=alice) == (
        grpc.StatusCode.INVALID_ARGUMENT
    )
    arena_service.service.limiter.budgets["challenge"] = Budget(1, 3600.0)
    stub.Challenge(pb.ChallengeRequest(my_bot="b1", opponent="a1"), metadata=bob)
    with pytest.raises(grpc.RpcError) as err:
        stub.Challenge(pb.ChallengeRequest(my_bot="b1", opponent="a1"), metadata=bob)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    wait = int(dict(err.value.trailing_metadata())["retry-after"])
    assert 3000 < wait <= 3600  # the running service's bucket refills meanwhile (by seconds, when loaded)


def test_anonymous_floods_are_limited_per_address(arena_service: Running) -> None:
    from arena.access.ratelimit import Budget

    arena_service.service.limiter.budgets["anonymous"] = Budget(5, 60.0)
    stub = arena_service.stub()
    for _ in range(5):
        stub.ListSeasons(pb.ListSeasonsRequest())
    assert _code(stub.ListSeasons, pb.ListSeasonsRequest()) == grpc.StatusCode.RESOURCE_EXHAUSTED
    # an owner has a bucket of its own
    stub.ListSeasons(pb.ListSeasonsRequest(), metadata=Running.auth(arena_service.tokens["alice"]))


def test_admin_manages_owners_remotely(arena_service: Running) -> None:
    stub = arena_service.stub()
    md = Running.auth(ADMIN)
    carol = stub.AddOwner(pb.OwnerRequest(name="carol"), metadata=md).token
    assert carol.startswith("elf_")
    assert stub.ListBots(pb.ListBotsRequest(), metadata=Running.auth(carol)).bots == []
    assert (
        _code(stub.AddOwner, pb.OwnerRequest(name="carol"), metadata=md)
        == grpc.StatusCode.FAILED_PRECONDITION
    )
    assert _code(stub.AddOwner, pb.OwnerRequest(name="../x"), metadata=md) == grpc.StatusCode.INVALID_ARGUMENT
    assert _code(stub.RevokeOwner, pb.OwnerRequest(name="nobody"), metadata=md) == grpc.StatusCode.NOT_FOUND
    assert stub.RevokeOwner(pb.OwnerRequest(name="carol"), metadata=md).revoked
    assert _code(stub.ListBots, pb.ListBotsRequest(), metadata=Running.auth(carol)) == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    fresh = stub.RotateOwner(pb.OwnerRequest(name="carol"), metadata=md).token
    assert fresh != carol and stub.ListBots(pb.ListBotsRequest(), metadata=Running.auth(fresh)).bots == []
    listed = {o.name: o for o in stub.ListOwners(pb.ListOwnersRequest(), metadata=md).owners}
    assert (
        listed["carol"].rotated_at
        and not listed["carol"].revoked
        and listed["carol"].token_prefix == fresh[:8]
    )


def _live_chunks(name: str, data: bytes, owner: str = ""):
    yield pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format="tar.gz", owner=owner))
    yield pb.SubmitBotChunk(data=data)


def test_submit_live_streams_the_build_output_while_it_runs_to_its_owner_only(
    arena_service: Running, tmp_path, monkeypatch
) -> None:
    """The first line arrives while the build is held at its gate, so before the build has ended;
    another owner is refused before any byte of output; the admin submitting for alice sees it."""
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    arena_service.service.launcher = "local"  # the build may see the gate file
    stub = arena_service.stub()
    alice, bob = (Running.auth(arena_service.tokens[n]) for n in ("alice", "bob"))
    gate = tmp_path / "gate"
    data = bundle_archive(build_bundle(tmp_path / "gated", gated_build(gate)))
    events = stub.SubmitBotLive(_live_chunks("gated", data), metadata=alice, timeout=120)
    first = next(events)
    assert first.WhichOneof("event") == "output" and first.output == "first line\n"
    assert not gate.exists()  # the build is still waiting: what came, came live
    gate.touch()
    rest = list(events)
    assert [e.output for e in rest if e.WhichOneof("event") == "output"] == ["second line\n"]
    assert rest[-1].WhichOneof("event") == "done" and rest[-1].done.version.build_ok
    assert "first line\nsecond line" in rest[-1].done.build_log

    refused = stub.SubmitBotLive(_live_chunks("gated", data + b"x"), metadata=bob, timeout=60)
    with pytest.raises(grpc.RpcError) as err:
        next(refused)  # not one event: the refusal comes before the upload is read
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and "another owner" in err.value.details()

    other = bundle_archive(build_bundle(tmp_path / "gated2", gated_build(gate) + "; echo by admin"))
    seen = list(stub.SubmitBotLive(_live_chunks("gated", other, "alice"), metadata=Running.auth(ADMIN)))
    assert "".join(e.output for e in seen) == "first line\nsecond line\nby admin\n"
    assert seen[-1].done.version.number == 2


def test_submit_live_caps_the_output_it_streams(arena_service: Running, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    arena_service.service.launcher = "local"
    script = f"printf '%0500d\\n' 0; seq 1 250 # {tmp_path}"  # one 500-character line, then 250
    data = bundle_archive(build_bundle(tmp_path / "loud", script))
    md = Running.auth(arena_service.tokens["alice"])
    seen = list(arena_service.stub().SubmitBotLive(_live_chunks("loud", data), metadata=md))
    lines = "".join(e.output for e in seen).splitlines()
    assert lines == ["0" * 300] + [str(i) for i in range(1, 200)]  # 200 lines of at most 300 characters
    assert [e.WhichOneof("event") for e in seen].count("truncated") == 1
    assert seen[-1].WhichOneof("event") == "done"
    assert "250\n" in seen[-1].done.build_log  # the whole log is kept with the version
