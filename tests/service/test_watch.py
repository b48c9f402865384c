"""WatchMatch over real gRPC while real matches play: sample bots (one of them thinking 80 ms a move)
in the bwrap sandbox, played by `run_job` with a live file and recorded like the workers record.

What is asserted is the ORDER of things, never a delay: each trick reaches the spectator only once
the live file already holds the next trick (or the match is over); the first twin of a duplicate
pair streams nothing but its status until its twin is over too; no event carries a card that was
not played in a trick; queued, finished, failed, restarted, deleted and unknown matches all end.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from typing import Any

import grpc
import pytest
from google.protobuf import text_format
from live_play import (
    add_bots,
    as_tuple,
    duplicate_pair,
    live_counts,
    public_events,
    queue_challenge,
    start_match,
    status_of,
)
from service_support import Running
from sqlalchemy import update

from arena.proto import arena_pb2 as pb
from arena.proto.arena_pb2_grpc import ArenaStub
from arena.proto.codec import decode_record
from arena.service.core import Service
from arena.service.errors import NotFound
from arena.service.ops_watch import watch
from arena.store.models import Match
from arena.store.queue import claim, release
from arena.workers.live import LiveWriter, live_path

CARD = re.compile(r"\b[789TJQKA][CDHS]\b")
FIELDS = {
    "status": None,  # MatchInfo: checked apart
    "deal": {"deal", "dealer"},
    "trick": {"deal", "trick", "leader", "cards", "winner", "tricks_won"},
    "deal_end": {"deal", "winner", "lines"},
}


class Watcher:
    """A WatchMatch client in a thread; at each event it notes what the world looked like then."""

    def __init__(self, running: Running, match_id: int, look: Any) -> None:
        self.events: list[tuple[pb.WatchEvent, Any]] = []
        self.error: grpc.RpcError | None = None
        self.first = threading.Event()
        stub = running.stub()

        def read() -> None:
            try:
                for ev in stub.WatchMatch(pb.WatchMatchRequest(match_id=match_id), timeout=400):
                    self.events.append((ev, look()))
                    self.first.set()
            except grpc.RpcError as exc:
                self.error = exc
            self.first.set()

        self.thread = threading.Thread(target=read, daemon=True)
        self.thread.start()
        assert self.first.wait(60), "no first event"

    def done(self) -> list[tuple[pb.WatchEvent, Any]]:
        self.thread.join(120)
        assert not self.thread.is_alive(), "the stream did not end"
        assert self.error is None, self.error
        return self.events

    def kinds(self) -> list[str]:
        return [ev.WhichOneof("event") for ev, _ in self.events]


def check_contents(ev: pb.WatchEvent) -> None:
    """Only the public fields; the only cards are the two of a trick."""
    kind = ev.WhichOneof("event")
    part = getattr(ev, kind)
    if kind == "status":
        if not part.revealed:
            assert not part.has_seed and part.salt == "" and part.winner == -1 and not part.verdicts
        return
    assert {f.name for f, _ in part.ListFields()} <= FIELDS[kind]
    cards = CARD.findall(text_format.MessageToString(ev))
    assert cards == (list(part.cards) if kind == "trick" else []), ev
    if kind == "trick":
        assert len(part.cards) == 2


def test_a_live_match_comes_one_trick_behind(arena_service: Running, tmp_path) -> None:
    store = arena_service.service.store
    add_bots(store, tmp_path)
    mid = queue_challenge(store)
    path = live_path(store.home, mid)
    watcher = Watcher(arena_service, mid, lambda: (live_counts(path), status_of(store, mid)))
    assert watcher.kinds() == ["status"] and watcher.events[0][0].status.status == "queued"

    played = start_match(store, mid)  # the queued match starts: the stream follows it
    played.join()
    events = watcher.done()

    statuses = [ev.status.status for ev, _ in events if ev.HasField("status")]
    assert statuses == ["queued", "running", "done"]
    assert events[-1][0].status.revealed and events[-1][0].status.has_seed
    first_running = next(i for i, (ev, _) in enumerate(events) if ev.status.status == "running")
    assert all(ev.HasField("status") for ev, _ in events[:first_running])

    tricks_seen, live_before_end = 0, 0
    for ev, ((tricks_in_file, over), status) in events:
        check_contents(ev)
        if ev.HasField("trick"):
            tricks_seen += 1
            # the k-th trick is out only when the file holds trick k+1, or the match is over
            assert tricks_in_file >= tricks_seen + 1 or over or status == "done", (
                tricks_seen,
                tricks_in_file,
            )
            live_before_end += not over
    assert live_before_end > 0  # it was followed while it played, not only replayed at the end

    record = decode_record(store.replay(mid))
    assert [as_tuple(ev) for ev, _ in events if not ev.HasField("status")] == public_events(record)
    last_tricks = [ev.trick for ev, _ in events if ev.HasField("trick")]
    assert sum(last_tricks[-1].tricks_won) == last_tricks[-1].trick  # per-deal tally of tricks won


def test_twins_are_embargoed_until_both_are_over(arena_service: Running, tmp_path) -> None:
    store = arena_service.service.store
    add_bots(store, tmp_path)
    first, second = duplicate_pair(store)
    statuses = lambda: (status_of(store, first), status_of(store, second))  # noqa: E731
    watcher = Watcher(arena_service, first, statuses)

    start_match(store, first).join()  # played live, with its twin still queued
    assert live_counts(live_path(store.home, first))[1]  # its live file is complete
    assert statuses() == ("done", "queued")
    so_far = list(watcher.events)

    follower = Watcher(arena_service, second, statuses)  # the second twin is watched as it plays
    start_match(store, second).join()
    events = watcher.done()
    second_events = follower.done()

    assert all(ev.HasField("status") for ev, _ in so_far)  # nothing but status while the twin waited
    order = ["queued", "running", "done"]
    seen_statuses = [ev.status.status for ev, _ in so_far]
    assert seen_statuses[0] == "queued" and seen_statuses == sorted(seen_statuses, key=order.index)
    assert not any(ev.status.revealed for ev, _ in so_far)
    for ev, seen in events:
        check_contents(ev)
        if not ev.HasField("status"):
            assert seen == ("done", "done"), seen  # no card of the first twin before both are over
    record = decode_record(store.replay(first))
    assert [as_tuple(ev) for ev, _ in events if not ev.HasField("status")] == public_events(record)
    assert events[-1][0].status.revealed

    # the second twin was not embargoed (its deck-mate was over): it streamed while it played
    assert [as_tuple(ev) for ev, _ in second_events if not ev.HasField("status")] == public_events(
        decode_record(store.replay(second))
    )
    assert any(not ev.HasField("status") and seen[1] == "running" for ev, seen in second_events)

    # a finished, revealed match streams every trick from its record (no live file left) and ends
    live_path(store.home, first).unlink()
    again = Watcher(arena_service, first, statuses).done()
    assert again[0][0].status.status == "done" and again[0][0].status.revealed
    assert [as_tuple(ev) for ev, _ in again[1:]] == public_events(record)


def test_an_unknown_match_is_not_found(arena_service: Running) -> None:
    stub = arena_service.stub()
    with pytest.raises(grpc.RpcError) as err:
        list(stub.WatchMatch(pb.WatchMatchRequest(match_id=987654), timeout=30))
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    assert "987654" in err.value.details()


# ---- every status ends: the operation itself, with a fake worker writing the live file ----------


def _collect(service: Service, match_id: int, steps: dict[int, Any], **kw: Any) -> list[Any]:
    """Watch; after the n-th event run steps[n] (the world changing under the watcher)."""

    async def main() -> list[Any]:
        out: list[Any] = []
        try:
            async for ev in watch(service, match_id, poll=0.02, status_every=0.02, **kw):
                out.append(ev)
                if len(out) in steps:
                    await asyncio.to_thread(steps[len(out)])
        except NotFound as exc:
            out.append(exc)
        return out

    return asyncio.run(asyncio.wait_for(main(), 120))


def _referee_events(writer: LiveWriter, deal: int, tricks: list[tuple[str, str]], end: bool) -> None:
    writer({"event": "deal_start", "deal": deal, "dealer": 1})
    for i, cards in enumerate(tricks, 1):
        writer({"event": "trick", "deal": deal, "trick": i, "leader": 0, "cards": list(cards), "winner": 0})
    if end:
        writer({"event": "match_end", "winner": 0})


def test_failed_restarted_deleted_and_idle_matches_end(store, tmp_path) -> None:
    add_bots(store, tmp_path)
    service = Service(store=store)
    a, b, c, d = (queue_challenge(store) for _ in range(4))

    def claim_it(mid: int) -> int:
        """Claim as a worker would; the attempt number its live file must name."""
        with store.tx() as s:
            claimed = claim(s, "fake-worker", ids=[mid])
            assert claimed is not None
            return claimed.attempts

    # failed: everything but the last trick written so far, then the final status, then the end
    w = LiveWriter(live_path(store.home, a), claim_it(a))
    _referee_events(w, 1, [("AS", "7S"), ("KS", "8S"), ("QS", "9S")], end=False)

    def fail() -> None:
        with store.tx() as s:
            s.execute(update(Match).where(Match.id == a).values(status="failed", lease_owner=None))

    out = _collect(service, a, {1: fail})
    assert [as_tuple(x)[0] for x in out] == ["status", "deal", "trick", "trick", "status"]
    assert [x.trick.cards[:] for x in out if x.HasField("trick")] == [["AS", "7S"], ["KS", "8S"]]
    assert out[-1].status.status == "failed" and not out[-1].status.revealed

    # restarted: the worker broke, the match went back to the queue and began again from deal 1
    w = LiveWriter(live_path(store.home, b), claim_it(b))
    _referee_events(w, 1, [("AS", "7S"), ("KS", "8S")], end=False)

    def requeue_and_restart() -> None:
        with store.tx() as s:
            release(s, "fake-worker", b)

    def second_attempt() -> None:
        w2 = LiveWriter(live_path(store.home, b), claim_it(b))  # the new attempt replaces the file
        _referee_events(w2, 1, [("TD", "7D"), ("JD", "8D"), ("QD", "9D")], end=False)

    def delete() -> None:
        with store.tx() as s:
            s.delete(s.get(Match, b))

    out = _collect(service, b, {3: requeue_and_restart, 4: second_attempt, 8: delete})
    shapes = [as_tuple(x) if not isinstance(x, NotFound) else ("gone",) for x in out]
    assert shapes[:3] == [("status", "running", False), ("deal", 1, 1), ("trick", 1, 1, 0, ("AS", "7S"), 0)]
    assert shapes[3] == ("status", "queued", False)
    assert shapes[4] == ("status", "running", False)  # a status between the attempts, always
    assert shapes[5:8] == [
        ("deal", 1, 1),
        ("trick", 1, 1, 0, ("TD", "7D"), 0),
        ("trick", 1, 2, 0, ("JD", "8D"), 0),
    ]  # the new attempt from its start, one trick behind; nothing of the first attempt again
    assert shapes[8] == ("gone",) and "removed" in str(out[8])

    # queued for longer than the idle limit: the stream ends with the current status
    out = _collect(service, c, {}, idle_limit=0.2)
    assert [as_tuple(x) for x in out] == [("status", "queued", False), ("status", "queued", False)]

    # an earlier attempt's file is not this attempt's feed: nothing until the worker replaces it
    claim_it(d)
    with store.tx() as s:
        release(s, "fake-worker", d)
    w = LiveWriter(live_path(store.home, d), 1)
    _referee_events(w, 1, [("AS", "7S"), ("KS", "8S"), ("QS", "9S")], end=True)
    w.close()
    assert claim_it(d) == 2
    out = _collect(service, d, {}, idle_limit=0.2)
    assert [as_tuple(x) for x in out] == [("status", "running", False), ("status", "running", False)]


def test_watch_streams_are_capped_per_address(arena_service: Running, tmp_path) -> None:
    from arena.service.ops_watch import GRPC_SLOTS, PER_ADDRESS

    store = arena_service.service.store
    add_bots(store, tmp_path)
    mid = queue_challenge(store)  # queued: its streams stay open, idle
    channels = [grpc.insecure_channel(arena_service.address) for _ in range(PER_ADDRESS + 1)]
    calls = []
    for ch in channels[:PER_ADDRESS]:
        call = ArenaStub(ch).WatchMatch(pb.WatchMatchRequest(match_id=mid), timeout=120)
        assert next(call).status.status == "queued"
        calls.append(call)
    assert GRPC_SLOTS.open("127.0.0.1") == PER_ADDRESS
    with pytest.raises(grpc.RpcError) as err:
        next(ArenaStub(channels[-1]).WatchMatch(pb.WatchMatchRequest(match_id=mid), timeout=30))
    assert (
        err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        and "too many watch streams" in err.value.details()
    )
    assert dict(err.value.trailing_metadata()).get("retry-after") == "5"
    for call in calls:  # the clients go away: their slots come back
        call.cancel()
    for _ in range(600):
        if GRPC_SLOTS.open() == 0:
            break
        time.sleep(0.05)
    assert GRPC_SLOTS.open() == 0
    call = ArenaStub(channels[-1]).WatchMatch(pb.WatchMatchRequest(match_id=mid), timeout=30)
    assert next(call).status.status == "queued"
    call.cancel()
    for ch in channels:
        ch.close()


def test_a_retry_that_kept_watched_decks_streams_only_its_status(store, tmp_path) -> None:
    """The second twin broke off after spectators saw a trick; its twin is done, so it is played
    again with the same decks, and then nothing but its status is streamed (the retry's cards are
    the ones already watched)."""
    add_bots(store, tmp_path)
    service = Service(store=store)
    first, second = duplicate_pair(store, "retry")
    with store.tx() as s:
        s.execute(update(Match).where(Match.id == first).values(status="done"))
        assert claim(s, "fake-worker", ids=[second]) is not None
    with store.tx() as s:
        seed = s.get_one(Match, second).seed
    _referee_events(LiveWriter(live_path(store.home, second), 1), 1, [("AS", "7S"), ("KS", "8S")], end=False)

    def break_off() -> None:
        with store.tx() as s:
            release(s, "fake-worker", second)

    def retry() -> None:
        with store.tx() as s:
            assert claim(s, "fake-worker", ids=[second]) is not None
        w = LiveWriter(live_path(store.home, second), 2)
        _referee_events(w, 1, [("AS", "7S"), ("KS", "8S"), ("QS", "9S"), ("JS", "TS")], end=False)

    # no news for the idle limit ends the stream with the current status: nothing else came out
    out = _collect(service, second, {3: break_off, 4: retry}, idle_limit=1.0)
    shapes = [as_tuple(x) for x in out]
    assert shapes[:3] == [("status", "running", False), ("deal", 1, 1), ("trick", 1, 1, 0, ("AS", "7S"), 0)]
    assert [s[:2] for s in shapes[3:]] == [("status", "queued"), ("status", "running"), ("status", "running")]
    with store.tx() as s:
        status_seed = s.get_one(Match, second).seed
    assert status_seed == seed  # the same decks: its twin's result holds them
