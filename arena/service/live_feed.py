"""A match's live events, kept once per server process and shared by every watcher of the match.

One `LiveFeed` per match tails its live events for all the match's watchers (gRPC `WatchMatch` and
the web's event stream alike), from the worker's live file or the match's Redis stream
(`arena.workers.live.open_reader`: the transport is the only difference): it reads only what was
added since its last read (a file from its offset, a stream from the last entry's id), at most once
per poll interval whatever the number of watchers, and in pieces of at most `READ_BYTES` (a server
that starts while a long match plays reads its events once, never holding the whole of them). The events
are kept once, each as its encoded `pb.WatchEvent` with the running tally of tricks won in its deal
(counted as the event arrives, once), in an `EventLog`. A watcher holds only a cursor into it (the
log it reads and an index), so a stream costs the same few objects on a match of 10,000 deals as on
one of two.

**The bound.** An `EventLog` keeps the newest `MAX_DEALS` deals of a match (a quarter more between
trims; at most 18 events a deal with a 32-card deck: at most 1,116 events, about 100 KiB). Past it,
the oldest deals are dropped from the server's memory (the live file on disk and the match's replay
keep everything). A watcher that keeps up sees every event; one that joins, or falls, more than
`MAX_DEALS` deals behind the play goes on from the start of the oldest deal kept. The live page
shows the same newest deals.

A feed nobody watches stays a while (at most `IDLE_FEEDS` of them, each at most `IDLE_SECONDS`), so
spectators coming and going do not make the server read a long file again; then it is dropped. A
revealed match's events, re-simulated from its record, are kept the same way (`RECORDED`).
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from array import array
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from arena.proto import arena_pb2 as pb
from arena.workers.live import ATTEMPT, open_reader

MAX_DEALS = 50  # deals of a match kept in memory, the newest ones (up to a quarter more between trims)
READ_BYTES = 1 << 18  # the most of a live file (or its worth of stream entries) read at once
IDLE_FEEDS = 8  # feeds of matches nobody watches, kept for spectators who come back
IDLE_SECONDS = 60.0  # and for at most this long
KINDS = ("deal", "trick", "deal_end")
PHASE = {"deal": 0, "trick": 1, "deal_end": 2}


def event_key(ev: dict[str, Any]) -> tuple[int, int, int]:
    """Where an event sits in the match: events of one attempt come in increasing key order."""
    kind = ev.get("kind")
    phase = PHASE[kind]  # type: ignore[index]
    return (int(ev.get("deal", 0)), phase, int(ev.get("trick", 0)) if kind == "trick" else 0)


def pack(key: tuple[int, int, int]) -> int:
    """An event key as one integer of the same order (a trick number and a phase below 2**16)."""
    deal, phase, trick = key
    return (deal << 20) | (phase << 16) | trick


def unpack(packed: int) -> tuple[int, int, int]:
    return (packed >> 20, (packed >> 16) & 0xF, packed & 0xFFFF)


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


class Tally:
    """The running count of tricks won per seat in the current deal, kept as events arrive."""

    def __init__(self) -> None:
        self.won = [0, 0]

    def apply(self, ev: dict[str, Any]) -> dict[str, Any]:
        """The event, a trick with its `tricks_won` so far in its deal."""
        kind = ev.get("kind")
        if kind == "deal":
            self.won = [0, 0]
        if kind == "trick" and ev.get("winner") in (0, 1):
            self.won[ev["winner"]] += 1
            return {**ev, "tricks_won": list(self.won)}
        return ev


_serials = itertools.count(1)


class EventLog:
    """The public events of one attempt at a match, encoded once, the newest `max_deals` deals of them.

    Events are numbered from 0 in the order they came; `base` is the number of the oldest one kept.
    Thread-safe: a feed appends from a worker thread while watchers read on the event loop."""

    def __init__(self, max_deals: int = MAX_DEALS) -> None:
        self.serial = next(_serials)  # tells two logs apart without holding the old one
        self.max_deals = max_deals
        self._lock = threading.Lock()
        self._frames: list[bytes] = []  # each a serialized pb.WatchEvent
        self._keys = array("q")  # each its packed `event_key`
        self._deals: deque[int] = deque()  # the numbers of the kept deals' "deal" events
        self._tally = Tally()
        self.base = 0
        self.last_trick = -1  # the number of the last trick, -1 before the first
        self.dropped_deals = 0

    @property
    def end(self) -> int:
        """The number the next event will get: how many came in all."""
        return self.base + len(self._frames)

    def __len__(self) -> int:
        return len(self._frames)

    def append(self, ev: dict[str, Any]) -> None:
        """Add one public event (a live file's line, or one of a record); others are ignored."""
        kind = ev.get("kind")
        if kind not in KINDS:
            return
        try:
            key = pack(event_key(ev))
            msg = to_message(self._tally.apply(ev))
        except (KeyError, TypeError, ValueError):  # a line the worker did not write: nobody sees it
            return
        if msg is None:  # pragma: no cover - every kind of KINDS has a message
            return
        data = msg.SerializeToString()
        with self._lock:
            number = self.end
            self._frames.append(data)
            self._keys.append(key)
            if kind == "deal":
                self._deals.append(number)
            elif kind == "trick":
                self.last_trick = number
            if len(self._deals) > self.max_deals + max(1, self.max_deals // 4):
                self._trim()  # in steps of a quarter: dropping from a list's front costs its length

    def extend(self, events: Iterable[dict[str, Any]]) -> EventLog:
        for ev in events:
            self.append(ev)
        return self

    def _trim(self) -> None:
        while len(self._deals) > self.max_deals:
            self._deals.popleft()
            self.dropped_deals += 1
        cut = self._deals[0] - self.base
        del self._frames[:cut]
        del self._keys[:cut]
        self.base += cut

    def releasable(self, over: bool) -> int:
        """The number of events that may be shown: all once the match is over and revealed, else
        those before the last trick (the deals' starts alone, before the first trick)."""
        with self._lock:
            if over or self.last_trick < 0:
                return self.end
            return self.last_trick

    def read(self, start: int, upto: int) -> tuple[int, list[tuple[int, bytes]]]:
        """Events `start` (or the oldest kept, if later) to `upto`: (where they began, [(key, frame)])."""
        with self._lock:
            start = max(start, self.base)
            lo, hi = start - self.base, max(0, upto - self.base)
            return start, list(zip(self._keys[lo:hi], self._frames[lo:hi], strict=True))

    def messages(self, upto: int) -> list[pb.WatchEvent]:
        """The kept events before `upto`, decoded (the live page's snapshot)."""
        return [pb.WatchEvent.FromString(data) for _, data in self.read(0, upto)[1]]


class Cursor:
    """Where one watcher is: the log it reads, the next event's number there, and the key of the last
    event it was shown (a new log, such as the record replacing the live file at the reveal, is read
    from its start, skipping what the watcher already has)."""

    def __init__(self) -> None:
        self.serial = 0
        self.index = 0
        self.last: int | None = None

    def take(self, log: EventLog, over: bool) -> Iterator[pb.WatchEvent]:
        if log.serial != self.serial:
            self.serial, self.index = log.serial, 0
        start, items = log.read(self.index, log.releasable(over))
        self.index = start + len(items)
        for key, data in items:
            if self.last is not None and key <= self.last:
                continue
            self.last = key
            yield pb.WatchEvent.FromString(data)


class LiveFeed:
    """One match's live events (its file or its stream), tailed by one reader for every watcher in
    the process."""

    def __init__(self, target: str | Path) -> None:
        self.target = target
        self._reader = open_reader(target)
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self.log = EventLog()  # a new one when the file is replaced (a new attempt)
        self.attempt: int | None = None  # the attempt the file being read belongs to
        self.catching_up = False  # a long file is being read in pieces: nobody is shown half of it
        self.users = 0

    def fresh(self, max_age: float) -> bool:
        return time.monotonic() - self._read_at < max_age

    def refresh(self, max_age: float, wait: bool = False) -> None:
        """Read what was appended to the file, unless someone did within `max_age` seconds. While
        another watcher reads it, return at once (unless `wait`): the caller shows what is known and
        looks again at its next poll, so a hundred watchers of a long file do not hold a hundred
        threads waiting for its first read."""
        if self.fresh(max_age):
            return
        if not self._lock.acquire(blocking=wait):
            return
        try:
            if self.fresh(max_age):  # another watcher read it while this one waited
                return
            while True:
                new = self._reader.poll(READ_BYTES)
                if self._reader.restarted:
                    self.log, self.attempt = EventLog(), None
                for ev in new:
                    if ev.get("kind") == ATTEMPT:
                        self.attempt = ev.get("attempt")
                    else:
                        self.log.append(ev)
                if not self._reader.more:
                    break
                self.catching_up = True
            self._read_at = time.monotonic()
        finally:
            self.catching_up = False
            self._lock.release()

    def log_of(self, attempt: int) -> EventLog | None:
        """The events so far if the file is attempt number `attempt`'s, else None (and None while a
        long file's first read is under way: its watchers start from the newest deals, not the first)."""
        log = self.log
        return log if self.attempt == attempt and not self.catching_up else None


class Feeds:
    """The live feeds of this process, one per match, shared by the matches' watchers."""

    def __init__(self, idle_feeds: int = IDLE_FEEDS, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_feeds, self.idle_seconds = idle_feeds, idle_seconds
        self._lock = threading.Lock()
        self._feeds: dict[str, LiveFeed] = {}
        self._idle: OrderedDict[str, float] = OrderedDict()  # feeds nobody watches, since when

    @contextlib.contextmanager
    def watching(self, target: str | Path) -> Iterator[LiveFeed]:
        """The feed of `target` (a match's `arena.workers.live.live_source`: its file, or its stream
        when Redis is configured), held (and counted) for as long as the block lasts."""
        path = str(target)
        with self._lock:
            feed = self._feeds.get(path)
            if feed is None:
                feed = self._feeds[path] = LiveFeed(path)
            feed.users += 1
            self._idle.pop(path, None)
            self._expire()
        try:
            yield feed
        finally:
            with self._lock:
                feed.users -= 1
                if feed.users == 0 and self._feeds.get(path) is feed:
                    self._idle[path] = time.monotonic()
                self._expire()

    def _expire(self) -> None:
        now = time.monotonic()
        while self._idle:
            path, since = next(iter(self._idle.items()))
            if len(self._idle) <= self.idle_feeds and now - since < self.idle_seconds:
                break
            del self._idle[path]
            del self._feeds[path]

    def kept(self) -> tuple[int, int]:
        """(feeds in memory, events they keep): what the live events cost this process now."""
        with self._lock:
            feeds = list(self._feeds.values())
        return len(feeds), sum(len(f.log) for f in feeds)


FEEDS = Feeds()
