"""Challenges cannot ask for more than the server gives them (issue #31): over the real gRPC service.

Every way to ask for a long match (`deals`, `rules: max_deals=`, `rules: flags=`, any integer option
of the rules) is held to one limit, `arena.service.challenge_limits.LIMITS.deals`; the clock and the
length together to a worst-case wall time; and an owner to a number of challenges queued or running.
Each refusal names what to change, its limit and the value given, and stores nothing.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from service_support import ADMIN, Running
from sqlalchemy import func, select

from arena.engine.rules import INT_OPTIONS, MAX_COUNT, Rules
from arena.proto import arena_pb2 as pb
from arena.proto import referee_pb2
from arena.service.challenge_limits import LIMITS, MOVES_PER_DEAL
from arena.store import models as m


@pytest.fixture
def arena(arena_service: Running) -> Running:
    store = arena_service.service.store
    for name, owner in (("a1", "alice"), ("a2", "alice"), ("b1", "bob")):
        store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path="/nonexistent", language="python"
        )
    return arena_service


def _challenges(running: Running) -> int:
    with running.service.store.read() as s:
        return s.scalar(select(func.count()).select_from(m.Match).where(m.Match.kind == "challenge"))


def _refused(running: Running, req: pb.ChallengeRequest, owner: str = "alice") -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        running.stub().Challenge(req, metadata=Running.auth(running.tokens[owner]))
    return err.value


def test_every_way_to_ask_for_a_long_match_is_refused_naming_its_limit(arena: Running) -> None:
    longest_flags = (LIMITS.deals + 1) // 8  # 8 x flags - 1 deals that score, at the longest
    cases = [  # (request, what the message must say)
        (
            pb.ChallengeRequest(deals=LIMITS.deals + 1),
            f"deals at most {LIMITS.deals}, got {LIMITS.deals + 1}",
        ),
        (pb.ChallengeRequest(deals=2**32 - 1), f"deals at most {LIMITS.deals}, got {2**32 - 1}"),
        (pb.ChallengeRequest(rules=["max_deals=10000"]), f"max_deals at most {LIMITS.deals}, got 10000"),
        (pb.ChallengeRequest(rules=["flags=10000"]), f"flags at most {longest_flags}, got 10000"),
        (pb.ChallengeRequest(rules=[f"flags={longest_flags + 1}"]), f"flags at most {longest_flags}"),
        (pb.ChallengeRequest(rules=["flags=100", "max_deals=300"]), "max_deals at most 200, got 300"),
        # the deals field with rules that would be short: the field is what is refused
        (pb.ChallengeRequest(deals=5000, rules=["max_deals=2"]), "deals at most 200, got 5000"),
    ]
    # every open-ended integer option of the rules, at the engine's own largest value: an option the
    # engine adds is held to the same limit (or, if it does not lengthen a match, listed here)
    cases += [(pb.ChallengeRequest(rules=[f"{name}={MAX_COUNT}"]), name) for name in INT_OPTIONS]
    for req, said in cases:
        req.my_bot, req.opponent = "a1", "b1"
        err = _refused(arena, req)
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, (req, err.details())
        assert said in err.details(), (req, err.details())
    assert _challenges(arena) == 0


def test_the_longest_allowed_match_is_accepted_and_stored_as_asked(arena: Running) -> None:
    alice = Running.auth(arena.tokens["alice"])
    longest_flags = (LIMITS.deals + 1) // 8
    for rules, deals in (([f"flags={longest_flags}"], 0), (["max_deals=2"], LIMITS.deals)):
        made = arena.stub().Challenge(
            pb.ChallengeRequest(my_bot="a1", opponent="b1", rules=rules, deals=deals), metadata=alice
        )
        with arena.service.store.read() as s:
            stored = Rules.from_pairs(s.get_one(m.Match, made.match.id).rules)
        assert stored.longest_match() <= LIMITS.deals
    assert stored.max_deals == LIMITS.deals  # the deals field replaced the rules' max_deals


def test_a_challenges_clock_and_length_together_are_capped(arena: Running) -> None:
    # the issue's challenge: a 60 s move clock, a one-hour bank and 200 deals (54 hours and more)
    issue = pb.ChallengeRequest(
        my_bot="a1",
        opponent="b1",
        deals=200,
        time_control=referee_pb2.TimeControl(move_ms=60_000, bank_ms=3_600_000),
    )
    err = _refused(arena, issue)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"at most {LIMITS.wall_seconds} s" in err.details() and "time_control" in err.details()
    # a 60 s clock is allowed for as many deals as fit: startup 10 s + deals x 32 moves x 60 s + 2 x 10 s
    fit = (LIMITS.wall_seconds - 10 - 2 * 10) // (MOVES_PER_DEAL * 60)
    slow = referee_pb2.TimeControl(move_ms=60_000)
    over = _refused(arena, pb.ChallengeRequest(my_bot="a1", opponent="b1", deals=fit + 1, time_control=slow))
    assert over.code() == grpc.StatusCode.INVALID_ARGUMENT and f"{fit + 1} deals x 32 moves" in over.details()
    alice = Running.auth(arena.tokens["alice"])
    arena.stub().Challenge(
        pb.ChallengeRequest(my_bot="a1", opponent="b1", deals=fit, time_control=slow), metadata=alice
    )
    # a flags target counts by its longest match: flags=1 is 7 deals, 7 x 32 moves x 40 s is over
    flags = _refused(
        arena,
        pb.ChallengeRequest(my_bot="a1", opponent="b1", time_control=referee_pb2.TimeControl(move_ms=40_000)),
    )
    assert flags.code() == grpc.StatusCode.INVALID_ARGUMENT and "7 deals" in flags.details()
    assert _challenges(arena) == 1


def test_an_owners_queued_and_running_challenges_are_capped(arena: Running) -> None:
    alice, bob = (Running.auth(arena.tokens[n]) for n in ("alice", "bob"))
    stub = arena.stub()
    req = pb.ChallengeRequest(my_bot="a1", opponent="b1", deals=1)
    with ThreadPoolExecutor(8) as pool:  # at once: the count and the insert cannot interleave
        codes = list(pool.map(lambda _: _code(stub, req, alice), range(LIMITS.open_per_owner + 3)))
    assert codes.count(grpc.StatusCode.OK) == LIMITS.open_per_owner, codes
    assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 3, codes
    err = _refused(arena, pb.ChallengeRequest(my_bot="a2", opponent="b1"))  # another of alice's bots
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert f"limit per owner is {LIMITS.open_per_owner}" in err.details() and "alice" in err.details()
    assert dict(err.trailing_metadata())["retry-after"] == str(LIMITS.retry_after)
    stub.Challenge(pb.ChallengeRequest(my_bot="b1", opponent="a1"), metadata=bob)  # bob has his own count
    stub.Challenge(
        pb.ChallengeRequest(my_bot="a1", opponent="b1"), metadata=Running.auth(ADMIN)
    )  # not counted
    with arena.service.store.tx() as s:  # one of alice's is played, one given up: two places free
        mine = list(s.scalars(select(m.Match).where(m.Match.requested_by == "alice").order_by(m.Match.id)))
        mine[0].status, mine[1].status = "done", "failed"
        mine[2].status = "running"  # running still counts
    for _ in range(2):
        stub.Challenge(req, metadata=alice)
    assert _code(stub, req, alice) == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert _challenges(arena) == LIMITS.open_per_owner + 2 + 2


def _code(stub, req: pb.ChallengeRequest, metadata) -> grpc.StatusCode:
    try:
        stub.Challenge(req, metadata=metadata)
    except grpc.RpcError as err:
        return err.code()
    return grpc.StatusCode.OK


def test_the_longest_match_bound_holds_in_the_engine() -> None:
    """What the limits rest on: a match to F flags never has more than `longest_match()` deals that
    score (each scores at least one line), played by the real engine with random cards, and with
    `max_deals` exactly that many deals."""
    import random

    from arena.engine import Match

    most = 0
    for seed in range(60):
        rules = Rules(flags=2, scoring="tendler", standoff="pot")  # the slowest scoring there is
        match, rng = Match(rules, seed), random.Random(seed)
        while not match.over:
            deal = match.start_deal()
            while not deal.done:
                match.play(rng.choice(deal.legal_cards()))
        scored = sum(1 for d in match.deals if d.outcome.winner is not None)
        assert scored <= rules.longest_match() == 15
        most = max(most, scored)
    assert most > 8  # the bound is not loose by more than the luck of 60 matches
    fixed = Match(Rules(max_deals=3), 1)
    while not fixed.over:
        deal = fixed.start_deal()
        while not deal.done:
            fixed.play(deal.legal_cards()[0])
    assert len(fixed.deals) == Rules(max_deals=3).longest_match() == 3
