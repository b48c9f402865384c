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
ends with the current status; the client may watch again. A match deleted while watched (a queued
match of a frozen season) ends the stream with NOT_FOUND.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.ladder.visibility import deck_mate_open, decks_replayed
from arena.memo import Memo
from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.service.errors import NotFound, ResourceExhausted
from arena.store import models as m
from arena.workers.live import ATTEMPT, LiveReader, live_path

POLL = 0.25  # seconds between looks at a running match's live file
STATUS_EVERY = 1.0  # seconds between looks at the match's row
IDLE_LIMIT = 3600.0  # seconds without any news before a stream ends
PER_ADDRESS = 8  # watch streams open at once per caller address (each transport)
TOTAL = 128  # watch streams open at once in all (each transport)
OPEN = ("queued", "running")
KINDS = ("deal", "trick", "deal_end")


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
    one address cannot hold a server's watchers (each polls a file and a row while it lasts)."""

    def __init__(self, per_address: int = PER_ADDRESS, total: int = TOTAL) -> None:
        self.per_address, self.total = per_address, total
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def enter(self, address: str) -> bool:
        with self._lock:
            if self._open.get(address, 0) >= self.per_address or sum(self._open.values()) >= self.total:
                return False
            self._open[address] = self._open.get(address, 0) + 1
            return True

    def leave(self, address: str) -> None:
        with self._lock:
            left = self._open.get(address, 0) - 1
            if left > 0:
                self._open[address] = left
            else:
                self._open.pop(address, None)

    def open(self, address: str | None = None) -> int:
        with self._lock:
            return self._open.get(address, 0) if address is not None else sum(self._open.values())


GRPC_SLOTS = Slots()  # WatchMatch streams of this process


async def watch_capped(
    service: Service, match_id: int, slots: Slots, address: str
) -> AsyncIterator[pb.WatchEvent]:
    """`watch`, holding one of `slots` for `address` while it lasts; ResourceExhausted when none is free."""
    if not slots.enter(address):
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
    from arena.engine import Match, card_code
    from arena.proto.codec import decode_record
    from arena.replay.record import rules_of
    from arena.replay.walk import DealEnd, DealStart, MatchEnd, Played, Walk, record_deals
    from arena.store import StoreError

    try:
        data = service.store.replay(match_id)
    except StoreError:  # a match that ended without a record (a failed launch)
        return []
    record = decode_record(data)
    game = Match(rules_of(record), record.seed)
    out: list[dict[str, Any]] = []
    for step in Walk(game, record_deals(record)):
        if isinstance(step, MatchEnd):
            break
        d = record.deals[step.number - 1]
        if isinstance(step, DealStart):
            out.append({"kind": "deal", "deal": d.number, "dealer": d.dealer})
        elif isinstance(step, Played) and step.trick is not None:
            trick = step.trick
            cards = [card_code(trick.lead), card_code(trick.follow)]
            out.append(
                {"kind": "trick", "deal": d.number, "trick": trick.no, "leader": trick.leader,
                 "cards": cards, "winner": trick.winner}
            )  # fmt: skip
        elif isinstance(step, DealEnd) and step.deal.outcome is not None:  # the deal is done
            winner = step.deal.outcome.winner
            out.append({"kind": "deal_end", "deal": d.number, "winner": winner, "lines": list(game.lines)})
    return out


# A revealed match's public events, by the match's database, id and attempt: its record no longer
# changes, and every spectator (and the fuzz) would otherwise decode and re-simulate it per stream.
_RECORDED: Memo[tuple[str, int, tuple[str, bool, str, int]], list[dict[str, Any]]] = Memo(256)


def _recorded(service: Service, match_id: int, state: State) -> list[dict[str, Any]]:
    key = (str(service.store.engine.url), match_id, state.key())
    return _RECORDED.get(key, lambda: with_tallies(record_events(service, match_id)))


def event_key(ev: dict[str, Any]) -> tuple[int, int, int]:
    """Where an event sits in the match: events of one attempt come in increasing key order."""
    kind = ev.get("kind")
    phase = {"deal": 0, "trick": 1, "deal_end": 2}[kind]  # type: ignore[index]
    return (int(ev.get("deal", 0)), phase, int(ev.get("trick", 0)) if kind == "trick" else 0)


def releasable(events: list[dict[str, Any]], over: bool) -> int:
    """How many leading events may be shown: all once over, else everything before the last trick.

    Before the first trick of the match, the deal's start (who deals) is public at once."""
    if over:
        return len(events)
    for i in range(len(events) - 1, -1, -1):  # from the end: the last trick is among the last events
        if events[i].get("kind") == "trick":
            return i
    return sum(1 for e in events if e.get("kind") == "deal")


def to_message(ev: dict[str, Any]) -> pb.WatchEvent | None:
    kind = ev.get("kind")
    if kind == "deal":
        return pb.WatchEvent(deal=pb.WatchDeal(deal=ev["deal"], dealer=ev["dealer"]))
    if kind == "trick":
        return pb.WatchEvent(
            trick=pb.WatchTrick(
                deal=ev["deal"],
                trick=ev["trick"],
                leader=ev["leader"],
                cards=ev["cards"],
                winner=ev["winner"],
                tricks_won=ev.get("tricks_won", []),
            )
        )
    if kind == "deal_end":
        winner = ev.get("winner")
        return pb.WatchEvent(
            deal_end=pb.WatchDealEnd(
                deal=ev["deal"], winner=-1 if winner is None else winner, lines=ev.get("lines", [])
            )
        )
    return None


def with_tallies(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with each trick's running count of tricks won per seat in its deal."""
    out, won = [], [0, 0]
    for ev in events:
        if ev.get("kind") == "deal":
            won = [0, 0]
        if ev.get("kind") == "trick" and ev.get("winner") in (0, 1):
            won[ev["winner"]] += 1
            ev = {**ev, "tricks_won": list(won)}
        out.append(ev)
    return out


class Feed:
    """The events of one attempt at a match, as far as they are known to the server.

    The live file names the attempt it belongs to in its first line (`LiveWriter`): until the worker
    of this attempt replaces an earlier attempt's file, the feed shows nothing. (Comparing the file's
    mtime with the claim's time misjudged a file written just after a claim: the kernel stamps files
    from a coarse clock, so its mtime could fall before the precise claim time.)"""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.reader = LiveReader(path)
        self.events: list[dict[str, Any]] = []  # with each trick's tally (`with_tallies`)
        self.attempt: int | None = None  # the attempt the file being read belongs to
        self._won = [0, 0]
        self.generation = 0  # bumped when the file was replaced and is read again from its start

    def poll(self, attempt: int) -> list[dict[str, Any]]:
        """The events so far if the file is attempt number `attempt`'s, else none."""
        new = self.reader.poll()
        if self.reader.restarted:
            self.events, self.attempt, self._won = [], None, [0, 0]
            self.generation += 1
        for ev in new:
            kind = ev.get("kind")
            if kind == ATTEMPT:
                self.attempt = ev.get("attempt")
            if kind == "deal":
                self._won = [0, 0]
            if kind == "trick" and ev.get("winner") in (0, 1):
                self._won[ev["winner"]] += 1
                ev = {**ev, "tricks_won": list(self._won)}
            if kind in KINDS:
                self.events.append(ev)
        return self.events if self.attempt == attempt else []


async def watch(
    service: Service,
    match_id: int,
    poll: float = POLL,
    idle_limit: float = IDLE_LIMIT,
    status_every: float = STATUS_EVERY,
    first: State | None = None,
) -> AsyncIterator[pb.WatchEvent]:
    """Status first, then the match's events one trick behind, then the final status. `first` is a
    state the caller read just now (to refuse an unknown match before answering), read again if None."""
    state = first if first is not None else await asyncio.to_thread(load_state, service, match_id)
    yield pb.WatchEvent(status=state.info)
    shown = state.key()
    feed = Feed(live_path(service.store.home, match_id))
    last: tuple[int, int, int] | None = None  # the key of the last event released
    done, generation = 0, 0  # how many of the feed's events were looked at already
    attempts = state.attempts
    news = time.monotonic()
    looked = time.monotonic()
    while True:
        if state.attempts != attempts or state.info.status == "queued":  # a new attempt starts over
            feed, last, attempts, done, generation = Feed(feed.path), None, state.attempts, 0, 0
        if not state.final and state.key() != shown:
            yield pb.WatchEvent(status=state.info)
            shown, news = state.key(), time.monotonic()
        events = await asyncio.to_thread(_available, service, match_id, state, feed)
        revealed_end = state.info.status == "done" and state.info.revealed
        upto = releasable(events, revealed_end)
        if feed.generation != generation:
            done, generation = 0, feed.generation
        start = min(done, upto) if events is feed.events else 0  # the feed only grows: skip what was seen
        if events is feed.events:
            done = max(done, upto)
        for ev in events[start:upto]:
            key = event_key(ev)
            if last is not None and key <= last:
                continue
            msg = to_message(ev)
            if msg is not None:
                yield msg
                last, news = key, time.monotonic()
        if state.final:
            if state.key() != shown:
                yield pb.WatchEvent(status=state.info)
            return
        if time.monotonic() - news > idle_limit:
            yield pb.WatchEvent(status=state.info)
            return
        following = state.info.status == "running" and not state.embargoed
        await asyncio.sleep(poll if following else max(poll, status_every))
        if time.monotonic() - looked >= status_every or not following:
            try:
                state = await asyncio.to_thread(STATES.get, service, match_id, status_every / 2)
            except NotFound:
                raise NotFound(
                    f"match {match_id} was removed while being watched (its season was frozen or deleted)"
                ) from None
            looked = time.monotonic()


def _available(service: Service, match_id: int, state: State, feed: Feed) -> list[dict[str, Any]]:
    """The events the server knows of and may consider releasing under `state` (none while embargoed)."""
    status = state.info.status
    if state.embargoed or status == "queued":
        return []
    if status == "done":
        if not state.info.revealed:  # pragma: no cover - done and unrevealed means embargoed
            return []
        return _recorded(service, match_id, state) or feed.poll(state.attempts)
    return feed.poll(state.attempts)  # running, or failed (its last trick stays held)


def snapshot(service: Service, match_id: int) -> tuple[State, list[dict[str, Any]]]:
    """What a watcher would have been shown so far, at once: for a page rendered on the server."""
    state = load_state(service, match_id)
    events = _available(service, match_id, state, Feed(live_path(service.store.home, match_id)))
    upto = releasable(events, state.info.status == "done" and state.info.revealed)
    return state, events[:upto]
