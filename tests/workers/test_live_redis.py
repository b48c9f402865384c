"""Live events through Redis streams: a worker and server replicas that share no folder (issue #32).

Each test has its own key prefix (ARENA_LIVE_PREFIX) on the shared Redis, and deletes its keys after.
What is asserted is counts and order: the events a reader sees, the entries a stream keeps, the
time to live Redis reports, the warnings logged; never a delay.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.engine.rules import TRICKS_PER_DEAL
from arena.service.challenge_limits import LIMITS
from arena.service.live_feed import LiveFeed
from arena.store.live_target import live_target, stream_target
from arena.workers import live_redis
from arena.workers.live import LIVE_DIR, LiveWriter, live_source

REDIS = "redis://127.0.0.1:6379/0"
DOWN = "redis://127.0.0.1:9/0"  # the discard port: nothing listens there
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "service"))  # the live tests' real matches and gRPC service


@pytest.fixture
def live_redis_env(redis_client, monkeypatch) -> Iterator[tuple[object, str]]:
    """Redis configured for live events, under a prefix of this test's own: (client, prefix)."""
    client = redis_client(REDIS)
    prefix = f"arena-test-live-{uuid.uuid4().hex[:10]}:"
    monkeypatch.setenv("ARENA_LIVE_URL", REDIS)
    monkeypatch.setenv("ARENA_LIVE_PREFIX", prefix)
    try:
        yield client, prefix
    finally:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)


def play_deal(writer: LiveWriter, deal: int, tricks: int, end: bool = False) -> None:
    """Referee events of one deal, as `MatchRunner.on_event` gives them (a hand is private)."""
    writer({"event": "deal_start", "deal": deal, "dealer": deal % 2})
    writer({"event": "hand", "seat": 0, "cards": ["AS", "KS"]})  # private: never written
    for t in range(1, tricks + 1):
        writer(
            {"event": "trick", "deal": deal, "trick": t, "leader": 0, "cards": ["AS", "7S"], "winner": t % 2}
        )
    writer({"event": "deal_end", "deal": deal, "winner": 0, "lines": [1, 0]})
    if end:
        writer({"event": "match_end", "winner": 0})


def test_a_reader_with_no_file_in_common_sees_the_writers_events(live_redis_env, tmp_path) -> None:
    client, prefix = live_redis_env
    worker_home, server_home, replica_home = (tmp_path / n for n in ("worker", "server", "replica"))
    target = live_target(worker_home / LIVE_DIR, 7)  # what the server names in the job: no path
    assert target == stream_target(7) == "stream:m7"
    writer = LiveWriter(target, 1)
    play_deal(writer, 1, 3)

    feed = LiveFeed(live_source(server_home, 7))  # the server looks where its file would be
    feed.refresh(0.0)
    log = feed.log_of(1)
    assert log is not None and feed.log_of(2) is None
    kinds = [m.WhichOneof("event") for m in log.messages(log.end)]
    assert kinds == ["deal", "trick", "trick", "trick", "deal_end"]
    assert log.releasable(over=False) == 3  # one trick behind: the deal and its first two tricks

    play_deal(writer, 2, 2, end=True)
    writer.close()
    feed.refresh(0.0)
    assert [m.WhichOneof("event") for m in log.messages(log.end)][5:] == [
        "deal",
        "trick",
        "trick",
        "deal_end",
    ]
    assert [m.trick.tricks_won[:] for m in log.messages(log.end) if m.HasField("trick")][-2:] == [
        [0, 1],
        [1, 1],
    ]

    replica = LiveFeed(live_source(replica_home, 7))  # a second replica, joining late
    replica.refresh(0.0)
    again = replica.log_of(1)
    assert again is not None and again.messages(again.end) == log.messages(log.end)
    # nothing on any disk: every home is still empty
    assert not any(p.exists() for p in (worker_home, server_home, replica_home))
    assert client.xlen(f"{prefix}m7:a1") == 4 + 5 + 1  # 9 public events and the match's end


def test_a_celery_job_names_the_stream_when_redis_is_configured(monkeypatch) -> None:
    """`arena season run --executor celery` names no live target: its jobs get the match's stream."""
    from arena.store.jobs import MatchJob
    from arena.workers.celery_app import remote_job

    job = MatchJob(match_id=12, bundles=("a", "b"), rules=(), seed=1, live="", attempt=2)
    monkeypatch.delenv("ARENA_LIVE_URL", raising=False)
    monkeypatch.delenv("ARENA_BROKER_URL", raising=False)
    assert remote_job(job) == job  # no Redis configured: nothing to watch through
    monkeypatch.setenv("ARENA_BROKER_URL", REDIS)
    assert remote_job(job).live == "stream:m12" and remote_job(job).attempt == 2
    with_file = MatchJob(match_id=12, bundles=("a", "b"), rules=(), seed=1, live="/runner/live/m12.jsonl")
    assert remote_job(with_file).live == "stream:m12"


def test_a_new_attempt_replaces_the_old_one_for_the_reader(live_redis_env, tmp_path) -> None:
    first = LiveWriter(stream_target(3), 1)
    play_deal(first, 1, 2)
    feed = LiveFeed(live_source(tmp_path, 3))
    feed.refresh(0.0)
    assert feed.log_of(1) is not None and len(feed.log_of(1) or ()) == 4

    second = LiveWriter(stream_target(3), 2)  # the match was claimed again after its worker died
    play_deal(second, 1, 1)
    feed.refresh(0.0)
    log = feed.log_of(2)
    assert feed.log_of(1) is None and log is not None and len(log) == 3


def test_a_stream_is_bounded_and_expires_after_the_end(live_redis_env) -> None:
    client, prefix = live_redis_env
    longest = LIMITS.deals * (TRICKS_PER_DEAL + 2) + 1  # the longest challenge's events and its end
    assert live_redis.CHALLENGE_DEALS == LIMITS.deals and live_redis.MAX_ENTRIES >= longest

    writer = LiveWriter(stream_target(5), 1)
    stream, pointer = f"{prefix}m5:a1", f"{prefix}m5"
    deals = live_redis.MAX_ENTRIES // (TRICKS_PER_DEAL + 2) + 3  # past the bound
    for deal in range(1, deals + 1):
        play_deal(writer, deal, TRICKS_PER_DEAL)
    assert client.xlen(stream) == live_redis.MAX_ENTRIES
    assert live_redis.END_TTL < client.ttl(stream) <= live_redis.RUNNING_TTL  # a dead worker's expires too
    assert live_redis.END_TTL < client.ttl(pointer) <= live_redis.RUNNING_TTL
    newest = client.xrevrange(stream, count=1)[0][1][live_redis.FIELD]
    assert b'"deal_end"' in newest and f'"deal":{deals}'.encode() in newest  # the oldest were dropped

    writer({"event": "match_end"})
    writer.close()
    assert 0 < client.ttl(stream) <= live_redis.END_TTL
    assert 0 < client.ttl(pointer) <= live_redis.END_TTL


def test_a_redis_that_is_down_costs_one_warning_each_side(monkeypatch, tmp_path, caplog) -> None:
    monkeypatch.setenv("ARENA_LIVE_URL", DOWN)
    caplog.set_level(logging.WARNING, logger="arena.workers.live")
    writer = LiveWriter(stream_target(9), 1)  # no exception: the match goes on
    for deal in range(1, 4):
        play_deal(writer, deal, 4, end=deal == 3)
    writer.close()
    feed = LiveFeed(live_source(tmp_path, 9))
    for _ in range(3):
        feed.refresh(0.0)
    assert feed.log_of(1) is None  # the watchers get the status only
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert "no live events for spectators" in lines[0] and "127.0.0.1:9" in lines[0]
    assert "watchers see its status only" in lines[1]
    assert not (tmp_path / LIVE_DIR).exists()


def test_a_match_plays_and_is_recorded_while_redis_is_down(monkeypatch, tmp_path, caplog) -> None:
    """A real match (sample bots, the real sandbox) whose job names a stream on a Redis that is down."""
    from dataclasses import replace

    from live_play import RUNNER, add_bots, launcher, queue_challenge, status_of

    from arena.ladder.record import record_result
    from arena.ladder.runner import job_for
    from arena.store import Store
    from arena.store.queue import claim
    from arena.workers.execute import run_job

    monkeypatch.setenv("ARENA_LIVE_URL", DOWN)
    caplog.set_level(logging.WARNING, logger="arena.workers.live")
    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path / "home")
    try:
        add_bots(store, tmp_path / "bots")
        mid = queue_challenge(store, "random", "greedy")
        with store.tx() as s:
            m = claim(s, RUNNER, ids=[mid])
            assert m is not None
            job = replace(job_for(s, m, launcher()), live=stream_target(mid))
        result = run_job(job)
        assert record_result(store, RUNNER, mid, result).recorded
        assert status_of(store, mid) == "done" and result.deals_played == 2 and not result.void
    finally:
        store.close()
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and f"match {mid}: no live events for spectators" in warnings[0], warnings


@pytest.mark.slow
def test_a_celery_played_match_is_watched_from_a_server_with_another_home(
    live_redis_env, tmp_path, monkeypatch
) -> None:
    """`arena worker` (its own ARENA_HOME) plays a challenge that a runner claimed (another home);
    a gRPC server with a third home streams every trick while the match runs, one trick behind."""
    import grpc
    from live_play import add_bots, as_tuple, launcher, public_events, queue_challenge, status_of
    from service_support import serve_in_thread

    from arena.ladder.server_run import ServerRun
    from arena.proto import arena_pb2 as pb
    from arena.proto.arena_pb2_grpc import ArenaStub
    from arena.proto.codec import decode_record
    from arena.service.core import Service
    from arena.store import Store
    from arena.workers.celery_app import CeleryExecutor
    from arena.workers.execute import run_job

    _, prefix = live_redis_env
    queue = f"arena-test-{uuid.uuid4().hex[:10]}"
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    homes = {n: tmp_path / n for n in ("runner", "worker", "server")}
    for home in homes.values():
        home.mkdir()
    monkeypatch.delenv("ARENA_LIVE_URL")  # the runner and the server take the broker's URL
    monkeypatch.setenv("ARENA_BROKER_URL", REDIS)
    runner_store = Store.open(db, home=homes["runner"])
    server_store = Store.open(db, home=homes["server"])
    env = {
        **os.environ,
        "ARENA_HOME": str(homes["worker"]),
        "ARENA_DATABASE_URL": db,
        "ARENA_BROKER_URL": REDIS,
        "ARENA_CELERY_QUEUE": queue,
        "ARENA_LIVE_PREFIX": prefix,
    }
    env.pop("ARENA_LIVE_URL", None)
    worker = subprocess.Popen(
        [str(Path(sys.executable).parent / "arena"), "worker", "--concurrency", "1", "--loglevel", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    address, stop, thread = serve_in_thread(Service(store=server_store))
    executor = CeleryExecutor(queue=queue)
    try:
        add_bots(runner_store, tmp_path / "bots")
        mid = queue_challenge(runner_store)
        seen: list[tuple[pb.WatchEvent, str]] = []  # each event, and the match's status when it came
        errors: list[grpc.RpcError] = []
        first = threading.Event()

        def watch() -> None:
            stub = ArenaStub(grpc.insecure_channel(address))
            try:
                for ev in stub.WatchMatch(pb.WatchMatchRequest(match_id=mid), timeout=300):
                    seen.append((ev, status_of(server_store, mid)))
                    first.set()
            except grpc.RpcError as exc:
                errors.append(exc)
            first.set()

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        assert first.wait(60)  # the queued status: the watcher follows the match from before its claim
        source = ServerRun(runner_store, workers=2, launcher=launcher(), live_dir=homes["runner"] / LIVE_DIR)
        job = source.next_job()
        assert job is not None and job.match_id == mid and job.live == f"stream:m{mid}"
        result = executor.submit(run_job, job).result(timeout=240)
        tricks = [e for e in public_events(decode_record(result.replay)) if e[0] == "trick"]
        # not recorded yet: whatever the watcher has came from the live events, all but the last trick
        for _ in range(600):
            if sum(ev.HasField("trick") for ev, _ in seen) >= len(tricks) - 1 or errors:
                break
            time.sleep(0.1)
        live = [as_tuple(ev) for ev, _ in seen if ev.HasField("trick")]
        source.record(job, result)
        watcher.join(120)
        assert not watcher.is_alive() and not errors, errors
    finally:
        executor.shutdown(cancel_futures=True)
        stop.set()
        thread.join(10)
        os.killpg(worker.pid, signal.SIGTERM)
        worker.communicate(timeout=60)
        runner_store.close()
        server_store.close()

    assert live == tricks[:-1]  # while the match ran: every trick but the last, in order
    expected = public_events(decode_record(result.replay))
    got = [as_tuple(ev) for ev, _ in seen if not ev.HasField("status")]
    assert got == expected  # then the rest once it was recorded: every event once, in order
    assert [ev.status.status for ev, _ in seen if ev.HasField("status")] == ["queued", "running", "done"]
    assert not (homes["worker"] / LIVE_DIR).exists() and not (homes["server"] / LIVE_DIR).exists()
    assert not (homes["runner"] / LIVE_DIR).exists()
