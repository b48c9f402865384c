"""Challenges get a bounded number of places of their own beside the server's workers; the ladder
always keeps all its workers while a season has work (issue #31).

The real `ServerRun` (what `arena serve --workers N` plays) on a real store, stepped as the pool
steps it: fill its `pool_size(N)` places, then hand out a job each time one ends. The issue's attack
is a queue of challenges that never end (a 2.5 s bot at a 60 s clock and 200 deals); before the
first change every worker that came free took the next challenge, until the ladder recorded nothing
at all; before the second, a challenge took one of the ladder's N workers (one of two by default).
Matches are played in-process by `engine_play` (the engine, no sandbox) and recorded for real.
"""

from __future__ import annotations

from collections import Counter

import engine_play
import pytest
from sqlalchemy import func, select

from arena.access.ratelimit import Budget, RateLimiter
from arena.access.roles import Principal
from arena.ladder import server_run
from arena.ladder.seasons import create_season, start_season
from arena.ladder.server_run import ServerRun, challenge_slots, pool_size
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.service.ops_challenge import challenge
from arena.store import MatchJob, Store
from arena.store.models import Match
from arena.workers.submit import submit_bundle

QUEUED = 10  # more challenges than any pool here has workers


@pytest.fixture
def arena(store: Store, tmp_path) -> Store:
    """Four bots of four owners and QUEUED challenges among them, queued as the API queues them."""
    for i in range(4):
        path = engine_play.make_bundle(tmp_path / "src", f"b{i}")
        submit_bundle(store, path, name=f"b{i}", owner=f"owner{i}", launcher="local")
    service = Service(store, limiter=RateLimiter({"challenge": Budget(1000, 3600.0)}), launcher="local")
    for n in range(QUEUED):  # the organiser's, which no per-owner cap counts
        req = pb.ChallengeRequest(my_bot=f"b{n % 4}", opponent=f"b{(n + 1) % 4}", deals=1)
        challenge(service, Principal("admin"), req)
    return store


def _kind(store: Store, job: MatchJob) -> str:
    with store.read() as s:
        return s.get_one(Match, job.match_id).kind


def _start_season(store: Store) -> None:
    create_season(store, "autumn", rules=["flags=1"], seed=5)
    start_season(store, "autumn")


@pytest.mark.parametrize("workers", [1, 2, 4, 8])
def test_challenges_that_never_end_leave_the_ladder_all_its_workers(arena: Store, workers: int) -> None:
    _start_season(arena)
    run = ServerRun(arena, workers=workers, launcher="local", refresh=0)
    share = challenge_slots(workers)
    assert share == {1: 1, 2: 1, 4: 1, 8: 2}[workers]
    assert run.slots == pool_size(workers) == workers + share
    inflight = [run.next_job() for _ in range(run.slots)]  # the pool fills its places
    assert all(job is not None for job in inflight)
    kinds = Counter(_kind(arena, j) for j in inflight if j is not None)
    assert kinds == Counter({"challenge": share, "ladder": workers})  # every worker is the ladder's
    assert run.next_job() is None  # and no more than the pool's places
    handed = Counter(kinds)
    for _ in range(12):  # only ladder matches end; the challenges keep their places
        ladder = next(j for j in inflight if j is not None and _kind(arena, j) == "ladder")
        run.record(ladder, engine_play.play(ladder))
        inflight.remove(ladder)
        job = run.next_job()
        assert job is not None
        inflight.append(job)
        handed[_kind(arena, job)] += 1
    assert handed["challenge"] == share  # never more while the season has work
    assert handed["ladder"] == workers + 12
    with arena.read() as s:
        played = s.scalar(
            select(func.count()).select_from(Match).where(Match.kind == "ladder", Match.status == "done")
        )
    assert played == 12


def test_a_challenge_that_ends_gives_its_place_to_the_next_challenge_and_no_more(arena: Store) -> None:
    _start_season(arena)
    run = ServerRun(arena, workers=4, launcher="local", refresh=0)
    jobs = [run.next_job() for _ in range(run.slots)]
    current = next(j for j in jobs if j is not None and _kind(arena, j) == "challenge")
    ends = [
        lambda j: run.record(j, engine_play.play(j)),  # played
        lambda j: run.release([j.match_id]),  # given back (the pool stopping)
        lambda j: run.fail(j, "RuntimeError: executor broke"),  # a failed attempt
    ]
    for end in ends:
        end(current)
        taken = run.next_job()
        assert taken is not None and _kind(arena, taken) == "challenge"  # its place
        assert run.next_job() is None  # no more: the ladder's four places are its own
        current = taken


def test_challenges_fill_idle_workers_and_give_them_back_to_a_season(arena: Store) -> None:
    one = ServerRun(arena, workers=1, launcher="local", refresh=0)  # no season: its worker plays them too
    jobs = [one.next_job() for _ in range(one.slots)]
    assert [_kind(arena, j) for j in jobs if j is not None] == ["challenge"] * 2
    one.release([j.match_id for j in jobs if j is not None])
    run = ServerRun(arena, workers=4, launcher="local", refresh=0)
    jobs = [run.next_job() for _ in range(run.slots)]
    assert [_kind(arena, j) for j in jobs if j is not None] == ["challenge"] * 5  # every idle place
    _start_season(arena)  # now the ladder has work: as the challenges end, it takes its workers back
    for j in jobs:
        assert j is not None
        run.record(j, engine_play.play(j))
    refill = Counter(_kind(arena, j) for j in (run.next_job() for _ in range(run.slots)) if j is not None)
    assert refill == Counter({"challenge": 1, "ladder": 4})


def test_after_finding_no_challenge_the_next_claim_waits_a_poll(store: Store, tmp_path, monkeypatch) -> None:
    """The pool asks for every free place each time a match ends; a claim is a write transaction,
    so one that found no challenge is not repeated until CHALLENGE_POLL seconds have passed (here an
    hour, then none, so that no clock is raced)."""
    for i in range(2):
        path = engine_play.make_bundle(tmp_path / "src", f"b{i}")
        submit_bundle(store, path, name=f"b{i}", owner=f"owner{i}", launcher="local")
    _start_season(store)
    monkeypatch.setattr(server_run, "CHALLENGE_POLL", 3600.0)
    run = ServerRun(store, workers=2, launcher="local", refresh=3600.0)
    jobs = [run.next_job() for _ in range(run.slots)]  # two ladder matches; no challenge queued
    assert [_kind(store, j) for j in jobs if j is not None] == ["ladder", "ladder"]
    service = Service(store, launcher="local")
    req = pb.ChallengeRequest(my_bot="b0", opponent="b1", deals=1)
    queued = challenge(service, Principal("admin"), req).match.id
    assert run.next_job() is None  # it looked moments ago: not again yet
    monkeypatch.setattr(server_run, "CHALLENGE_POLL", 0.0)  # the poll has passed
    job = run.next_job()
    assert job is not None and job.match_id == queued  # its own place
