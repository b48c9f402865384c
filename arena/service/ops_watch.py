"""Watching a match live, one full trick behind, for everyone (spectators, owners and the admin alike).

A trick is released only once the next trick is complete, or the match is over and revealed: a
spectator never learns a card before both seats could act on it, and so cannot tip off a bot. Hands,
drawn cards and the stock never appear. A match whose deck-mate (its duplicate twin, or any match
with the same seed) is still queued or running streams only its status, even once it is over
itself: its cards would tell the twin's hands. So does a retry that kept the decks of an attempt
spectators may have watched (`decks_replayed`). It streams its events once it is revealed
(`arena.ladder.visibility`). The events come from the worker's live file (`arena.workers.live`)
while a match plays, and from the public record once it is revealed.

The stream: a status first; whenever the status changes, the new status (before the events it
allows, except the last one: the final status comes after the last events); and it ends after a
final status (done and revealed, or failed). A match claimed again after a worker broke down
restarts from its first deal: a status (queued, or running again) always comes between the two
attempts, and the events of the new attempt follow from deal 1 (clients drop what they showed).
A stream on which nothing happens for `IDLE_LIMIT` seconds (a match queued behind a long season)
ends with the current status; the client may watch again. So does every stream when the server
stops (`end_streams`). A match deleted while watched (a queued match of a frozen season) ends the
stream with NOT_FOUND.

The events are kept once per process for all of a match's watchers, the newest `MAX_DEALS` deals of
them (`arena.service.live_feed`): a stream holds a cursor, not a copy.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from arena import metrics
from arena.access.shared_state import SharedState, leases
from arena.ladder.visibility import deck_mate_open, decks_replayed
from arena.memo import Memo
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.service.errors import NotFound, ResourceExhausted
from arena.service.live_feed import FEEDS, IDLE_FEEDS, Cursor, EventLog, LiveFeed
from arena.service.live_feed import event_key as event_key  # the web's event ids
from arena.store import models as m
from arena.workers.live import live_source

POLL = 0.25  # seconds between looks at a running match's live file
STATUS_EVERY = 1.0  # seconds between looks at the match's row
IDLE_LIMIT = 3600.0  # seconds without any news before a stream ends
PER_ADDRESS = 8  # watch streams open at once per caller address (each transport)
TOTAL = 128  # watch streams open at once in all (each transport)
OPEN = ("queued", "running")


@dataclass(frozen=True)
class State:
    info: pb.MatchInfo
    embargoed: bool  # a match dealing the same cards is open, or a retry kept watched decks
    attempts: int  # claims so far: a new one restarts the match

    @property
    def final(self) -> bool:
        return self.info.status == "failed" or (self.info.status == "done" and self.info.revealed)

    def key(self) -> tuple[str, bool, str, int]:
        return (self.info.status, self.info.revealed, self.info.started_at, self.attempts)


def load_state(service: Service, match_id: int) -> State:
    from arena.service.ops_results import get_match

    info = get_match(service, match_id)  # raises NotFound
    with service.store.read() as s:
        match = s.get(m.Match, match_id)
        if match is None:
            raise NotFound(f"no match {match_id}")
        embargoed = deck_mate_open(s, match) or decks_replayed(s, match)
        return State(info, embargoed, match.attempts or 0)


class StateCache:
    """The last `State` read per match, shared by every watcher in the process: a hundred spectators
    of one match cost one read of its row per interval, not a hundred. Only ever older than a fresh
    read by `max_age`, which delays what a watcher is shown, never shows it early."""

    MAX = 4096  # matches remembered; past this the oldest half is forgotten

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[tuple[int, int], tuple[float, State]] = {}

    def fresh(self, service: Service, match_id: int, max_age: float) -> State | None:
        """The state remembered if it is younger than `max_age`, else None: no thread, no read."""
        with self._lock:
            hit = self._states.get((id(service), match_id))
        return hit[1] if hit is not None and time.monotonic() - hit[0] < max_age else None

    def get(self, service: Service, match_id: int, max_age: float) -> State:
        key = (id(service), match_id)
        now = time.monotonic()
        with self._lock:
            hit = self._states.get(key)
        if hit is not None and now - hit[0] < max_age:
            return hit[1]
        state = load_state(service, match_id)  # raises NotFound, and then nothing is remembered
        with self._lock:
            self._states[key] = (now, state)
            if len(self._states) > self.MAX:
                for old in sorted(self._states, key=lambda k: self._states[k][0])[: self.MAX // 2]:
                    del self._states[old]
        return state


STATES = StateCache()


class Slots:
    """Counts of open watch streams, per caller address and in all: each transport caps them, so that
    one address cannot hold a server's watchers (each polls a file and a row while it lasts). With
    shared state they are leases in Redis (`arena.access.shared_state`), counted across replicas
    (each stream's lease is renewed while it lasts; a crashed replica's expire)."""

    def __init__(
        self,
        per_address: int = PER_ADDRESS,
        total: int = TOTAL,
        state: SharedState | None = None,
        kind: str = "watch-grpc",
    ) -> None:
        self.per_address, self.total, self.kind = per_address, total, kind
        self._leases = leases(state, kind)
        self._held: dict[str, list[str]] = {}  # address -> the leases this process holds for it
        self._lock = threading.Lock()

    def enter(self, address: str) -> bool:
        holder = self._leases.acquire(address, self.per_address, self.total)
        if holder is None:
            return False
        with self._lock:
            self._held.setdefault(address, []).append(holder)
        metrics.stream_opened(self.kind)
        return True

    def leave(self, address: str) -> None:
        with self._lock:
            mine = self._held.get(address)
            if not mine:
                return
            holder = mine.pop()
            if not mine:
                del self._held[address]
        metrics.stream_opened(self.kind, -1)
        self._leases.release(address, holder)

    def open(self, address: str | None = None) -> int:
        return self._leases.count(address)


def slots_of(service: Service, slots: Slots, kind: str = "watch-grpc") -> Slots:
    """`slots`, or with the service's shared state the replicas' slots of that transport (same limits)."""
    state = service.state
    if state is None:
        return slots
    return state.shared(kind, lambda: Slots(slots.per_address, slots.total, state, kind))


GRPC_SLOTS = Slots()  # WatchMatch streams of this process


async def watch_capped(
    service: Service, match_id: int, slots: Slots, address: str
) -> AsyncIterator[pb.WatchEvent]:
    """`watch`, holding one of `slots` for `address` while it lasts; ResourceExhausted when none is free."""
    slots = slots_of(service, slots)
    shared = service.state is not None  # a round trip to Redis: off the event loop
    if not (await asyncio.to_thread(slots.enter, address) if shared else slots.enter(address)):
        raise ResourceExhausted(
            f"too many watch streams open from {address} (at most {slots.per_address}); close one and retry",
            retry_after=5,
        )
    try:
        async for ev in watch(service, match_id):
            yield ev
    finally:
        slots.leave(address)


def record_events(service: Service, match_id: int) -> list[dict[str, Any]]:
    """The public events of a finished, revealed match, re-simulated from its record."""
    return list(iter_record_events(service, match_id))


def iter_record_events(service: Service, match_id: int) -> Iterator[dict[str, Any]]:
    """`record_events` one at a time: a 10,000-deal match is never held whole as dicts."""
    from arena.engine import Match, card_code
    from arena.proto.codec import decode_record
    from arena.replay.record import rules_of
    from arena.replay.walk import DealEnd, DealStart, MatchEnd, Played, Walk, record_deals
    from arena.store import StoreError

    try:
        data = service.store.replay(match_id)
    except StoreError:  # a match that ended without a record (a failed launch)
        return
    record = decode_record(data)
    game = Match(rules_of(record), record.seed)
    for step in Walk(game, record_deals(record)):
        if isinstance(step, MatchEnd):
            break
        d = record.deals[step.number - 1]
        if isinstance(step, DealStart):
            yield {"kind": "deal", "deal": d.number, "dealer": d.dealer}
        elif isinstance(step, Played) and step.trick is not None:
            trick = step.trick
            cards = [card_code(trick.lead), card_code(trick.follow)]
            yield {"kind": "trick", "deal": d.number, "trick": trick.no, "leader": trick.leader,
                   "cards": cards, "winner": trick.winner}  # fmt: skip
        elif isinstance(step, DealEnd) and step.deal.outcome is not None:  # the deal is done
            winner = step.deal.outcome.winner
            yield {"kind": "deal_end", "deal": d.number, "winner": winner, "lines": list(game.lines)}


# A revealed match's public events (the newest MAX_DEALS deals), by the match's database, id and
# attempt: its record no longer changes, and every spectator would otherwise decode and re-simulate
# it per stream. A watcher holds the log it reads, so one dropped from here lives while watched.
RECORDED: Memo[tuple[str, int, tuple[str, bool, str, int]], EventLog] = Memo(IDLE_FEEDS)


def _recorded(service: Service, match_id: int, state: State) -> EventLog:
    key = (str(service.store.engine.url), match_id, state.key())
    return RECORDED.get(key, lambda: EventLog().extend(iter_record_events(service, match_id)))


class _Ended:
    """Stream ends asked for by the server's stop (`end_streams`): a watcher started before the last
    one ends at its next look, with the current status (the client may watch again later)."""

    count = 0


def end_streams() -> None:
    """End every watch stream of this process within a poll (`arena serve`'s stop): the web's and
    gRPC's streams close by themselves instead of holding the server until their clients go."""
    _Ended.count += 1


async def watch(
    service: Service,
    match_id: int,
    poll: float = POLL,
    idle_limit: float = IDLE_LIMIT,
    status_every: float = STATUS_EVERY,
    first: State | None = None,
) -> AsyncIterator[pb.WatchEvent]:
    """Status first, then the match's events one trick behind, then the final status. `first` is a
    state the caller read just now (to refuse an unknown match before answering), read again if None.
    The events come from the process's one feed of the match (`live_feed.FEEDS`): the stream itself
    holds only its cursor."""
    ended = _Ended.count
    state = first if first is not None else await asyncio.to_thread(load_state, service, match_id)
    yield pb.WatchEvent(status=state.info)
    shown = state.key()
    with FEEDS.watching(live_source(service.store.home, match_id)) as feed:
        cursor = Cursor()
        attempts = state.attempts
        news = time.monotonic()
        looked = time.monotonic()
        while True:
            if state.attempts != attempts or state.info.status == "queued":  # a new attempt starts over
                cursor, attempts = Cursor(), state.attempts
            if not state.final and state.key() != shown:
                yield pb.WatchEvent(status=state.info)
                shown, news = state.key(), time.monotonic()
            if _needs_io(state, feed, poll / 2):
                log = await asyncio.to_thread(_available, service, match_id, state, feed, poll / 2)
            else:
                log = _available(service, match_id, state, feed, poll / 2)
            if log is not None:
                for msg in cursor.take(log, state.info.status == "done" and state.info.revealed):
                    yield msg
                    news = time.monotonic()
            if state.final:
                if state.key() != shown:
                    yield pb.WatchEvent(status=state.info)
                return
            if time.monotonic() - news > idle_limit or _Ended.count != ended:
                yield pb.WatchEvent(status=state.info)
                return
            following = state.info.status == "running" and not state.embargoed
            await asyncio.sleep(poll if following else max(poll, status_every))
            if time.monotonic() - looked >= status_every or not following:
                try:  # a state another watcher read just now costs no thread hop
                    cached = STATES.fresh(service, match_id, status_every / 2)
                    state = (
                        cached
                        if cached is not None
                        else await asyncio.to_thread(STATES.get, service, match_id, status_every / 2)
                    )
                except NotFound:
                    raise NotFound(
                        f"match {match_id} was removed while being watched (its season was frozen or deleted)"
                    ) from None
                looked = time.monotonic()


def _needs_io(state: State, feed: LiveFeed, max_age: float) -> bool:
    """Whether `_available` would read a file or the store (else it runs on the loop, at once)."""
    if state.embargoed or state.info.status == "queued":
        return False
    return state.info.status == "done" or not feed.fresh(max_age)


def _available(
    service: Service, match_id: int, state: State, feed: LiveFeed, max_age: float, wait: bool = False
) -> EventLog | None:
    """The events the server knows of and may consider releasing under `state` (none while embargoed)."""
    status = state.info.status
    if state.embargoed or status == "queued":
        return None
    if status == "done":
        if not state.info.revealed:  # pragma: no cover - done and unrevealed means embargoed
            return None
        recorded = _recorded(service, match_id, state)
        if recorded.end:
            return recorded
    feed.refresh(max_age, wait)  # running, or failed (its last trick stays held), or done without a record
    return feed.log_of(state.attempts)


def snapshot(service: Service, match_id: int) -> tuple[State, list[dict[str, Any]]]:
    """What a watcher would have been shown so far, at once: for a page rendered on the server (the
    newest `MAX_DEALS` deals of a long match)."""
    from google.protobuf.json_format import MessageToDict

    state = load_state(service, match_id)
    with FEEDS.watching(live_source(service.store.home, match_id)) as feed:
        log = _available(service, match_id, state, feed, POLL / 2, wait=True)
    if log is None:
        return state, []
    events = []
    for msg in log.messages(log.releasable(state.info.status == "done" and state.info.revealed)):
        kind = msg.WhichOneof("event")
        part = MessageToDict(
            getattr(msg, kind), preserving_proto_field_name=True, always_print_fields_with_no_presence=True
        )
        events.append({"kind": kind, **part})
    return state, events
