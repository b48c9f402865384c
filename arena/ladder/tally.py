"""A season's results aggregated per pair of entries, and each entry's last rating points, kept up to
date by reading only what was recorded since (issue #30).

The key is the season's own count of recorded results, `Season.recorded` (the season row is read
anyway): every recorded match takes the next `record_seq`, so the results not yet tallied are those
with `record_seq` in [tallied, recorded). The first read aggregates in SQL (GROUP BY entry pair and
winner: one row per pair and outcome, never one per match); each later one aggregates only the new
results (an index on (season_id, record_seq) serves it) and adds them in. The trend points come the
same way: a window query for the last `TREND_POINTS` of every entry the first time, then only the new
rating changes. Memory is bounded: O(pairs + entries) per season, for the last `SEASONS` seasons.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy import Engine, case, func, select
from sqlalchemy.orm import Session

from arena.ladder import tally_store
from arena.memo import Memo
from arena.store.models import Match, RatingChange, Season

TREND_POINTS = (
    11  # a standings row's trend: its last rating points (the rating before its last 10 matches on)
)
SEASONS = 8  # seasons whose tallies are kept
SHIFT = np.int64(1 << 32)  # a pair's key: lower entry id · SHIFT + higher entry id


@dataclass(frozen=True)
class Tally:
    """A season's counted results up to `recorded`, per pair of entries (ids lo < hi)."""

    recorded: int
    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # sorted lo·SHIFT + hi
    games: np.ndarray = field(default_factory=lambda: np.zeros(0))
    points: np.ndarray = field(default_factory=lambda: np.zeros(0))  # lo's points against hi
    trends: dict[int, tuple[float, ...]] = field(default_factory=dict)  # entry id -> last points
    fit: Any = None  # what standings.py made from it (its key and fit); None: not fitted here yet
    warm: tuple[np.ndarray, np.ndarray] | None = None  # a fit's (sorted entry ids, ratings): the next start
    since: int = 0  # the tally `fit` was made from held this many results ...
    delta: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # ... and these were added since (keys,
    # games, lo's points, as above): what `arena.ladder.refit` takes in from that fit; None: not known
    index: dict[bytes, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, compare=False, repr=False)
    # `pairs`' (u, v) by the entry ids they were found in (one item): kept while no new pair comes

    def pairs(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(u, v, games, u's points) with each entry as its index in `ids` (the season's entry ids,
        sorted)."""
        key = ids.tobytes()
        found = self.index.get(key)
        if found is None:  # a binary search of every pair: once per tally of new pairs, not per fit
            u, v, _, _ = _indexed(ids, self.keys, self.games, self.points)
            self.index.clear()
            self.index[key] = found = (u, v)
        return found[0], found[1], self.games, self.points

    def added(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """`pairs` of the results added since the tally of `since` results only (None: not known)."""
        return None if self.delta is None else _indexed(ids, *self.delta)


def _indexed(
    ids: np.ndarray, keys: np.ndarray, games: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return np.searchsorted(ids, keys // SHIFT), np.searchsorted(ids, keys % SHIFT), games, points


class _Slot:
    """One season's latest tally; replaced whole (readers never see a half-updated one)."""

    def __init__(self) -> None:
        self.tally: Tally | None = None
        self.saved: int | None = None  # the results of the tally saved in the store (None: unknown)
        self.lock = threading.Lock()  # one refresh at a time per season


_SLOTS: Memo[tuple, _Slot] = Memo(SEASONS)


def season_key(s: Session, season: Season) -> tuple:
    """A season's identity across processes' databases (ids restart in a new database), and its
    revision: a void or a recompute changes results already tallied, so it starts a new tally."""
    return (str(s.get_bind().engine.url), season.id, season.name, season.created_at, season.revision or 0)


def tally(s: Session, season: Season) -> tuple[Tally, bool]:
    """The season's tally as of `season.recorded`, and whether it changed since the last call (a new
    fit is due). Reads only the results recorded since the last tally of this season: this process's,
    else the one saved in the store (`arena.ladder.tally_store`), else none (the whole season)."""
    slot = _SLOTS.get(season_key(s, season), _Slot)
    recorded = int(season.recorded or 0)
    with slot.lock:
        old = slot.tally
        if old is not None and old.recorded == recorded:
            return old, False
        if old is None or old.recorded > recorded:
            old = tally_store.load(s, season.id, recorded) or Tally(0)
            slot.saved = old.recorded if old.recorded else None
        if old.recorded == recorded:
            slot.tally = old
            return old, True
        delta = _canonical(_aggregate(s, season.id, old.recorded, recorded))
        new = _add(old, delta)
        trends = dict(old.trends) if old.recorded else _trend_points(s, season.id, recorded)
        if old.recorded:
            _extend_trends(trends, s, season.id, old.recorded, recorded)
        added = None if old.delta is None else _add(Tally(old.since, *old.delta), delta)
        index = dict(old.index) if new[0] is old.keys else {}  # no new pair: the same (u, v)
        slot.tally = Tally(recorded, *new, trends, old.fit, old.warm, old.since, added, index)
        return slot.tally, True


def keep_fit(
    s: Session, season: Season, current: Tally, fit: Any, warm: tuple[np.ndarray, np.ndarray]
) -> None:
    """Remember `fit` (and `warm`, its ratings by entry id: the next fit's start) with the tally it
    was made from, if that is still the season's latest."""
    slot = _SLOTS.get(season_key(s, season), _Slot)
    with slot.lock:
        if slot.tally is current:  # what is added from now on is added since this fit
            empty = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
            slot.tally = replace(current, fit=fit, warm=warm, since=current.recorded, delta=empty)


@dataclass(frozen=True)
class Unsaved:
    """A tally of this process worth saving in the store (`tally_store.save_due`)."""

    slot: _Slot
    season_id: int
    tally: Tally
    revision: int = 0  # the season's revision it was tallied at: a void or recompute since voids it


def unsaved(s: Session, season: Season) -> Unsaved | None:
    """The season's latest fitted tally in this process, if the store's saved one is far enough
    behind it; `save` it once the caller's transaction is over."""
    slot = _SLOTS.get(season_key(s, season), _Slot)
    with slot.lock:
        kept = slot.tally
        if kept is None or kept.warm is None or not tally_store.save_due(slot.saved, kept.recorded):
            return None
        return Unsaved(slot, season.id, kept, season.revision or 0)


def save(engine: Engine, pending: Unsaved | None) -> None:
    """Save an `unsaved` tally in its own transaction. Never call it inside a transaction that holds
    locks (a season row taken FOR UPDATE, SQLite's write lock): it would wait on its own caller."""
    if pending is None:
        return
    if tally_store.save(engine, pending.season_id, pending.tally, pending.tally.warm, pending.revision):
        with pending.slot.lock:
            pending.slot.saved = max(pending.slot.saved or 0, pending.tally.recorded)


CHUNK = 50_000  # aggregated rows fetched at a time (a first tally of a large season streams)


def _aggregate(s: Session, season_id: int, since: int, until: int) -> tuple[np.ndarray, ...]:
    """(entry0, entry1, games, entry0's points) per ordered pair of entries, over the counted matches
    with record_seq in [since, until): aggregated in SQL, fetched CHUNK rows at a time into arrays."""
    points0 = func.sum(case((Match.winner == 0, 1.0), (Match.winner.is_(None), 0.5), else_=0.0))
    result = s.execute(
        select(Match.entry0_id, Match.entry1_id, func.count(), points0)
        .where(
            Match.season_id == season_id,
            Match.record_seq >= since,
            Match.record_seq < until,
            Match.status == "done",
            Match.void.is_(False),
            Match.entry0_id.is_not(None),
            Match.entry1_id.is_not(None),
        )
        .group_by(Match.entry0_id, Match.entry1_id)
        .execution_options(yield_per=CHUNK)
    )
    parts = [np.array(chunk, dtype=np.float64).reshape(-1, 4) for chunk in result.partitions()]
    rows = np.concatenate(parts) if parts else np.zeros((0, 4))
    return rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), rows[:, 2], rows[:, 3]


def _canonical(rows: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Aggregated rows (entry0, entry1, games, entry0's points) as a tally's arrays: sorted keys
    lo·SHIFT + hi, each once, with their games and lo's points. O(k log k) for k new rows."""
    a, b, count, won0 = rows
    lo_first = a < b
    keys = np.where(lo_first, a * SHIFT + b, b * SHIFT + a)
    lo_points = np.where(lo_first, won0, count - won0)
    unique, at = np.unique(keys, return_inverse=True)
    return unique, np.bincount(at, count, len(unique)), np.bincount(at, lo_points, len(unique))


def _add(
    old: Tally, delta: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The old tally's arrays with the new (canonical) rows added in: the pairs met before are found
    by binary search (O(k log pairs)) and a new pair is inserted in place, never a sort of the whole."""
    keys, count, lo_points = delta
    if not len(keys):
        return old.keys, old.games, old.points
    at = np.searchsorted(old.keys, keys)
    met = at < len(old.keys)
    met[met] = old.keys[at[met]] == keys[met]
    games, points = old.games.copy(), old.points.copy()  # the old arrays are shared: read only
    games[at[met]] += count[met]
    points[at[met]] += lo_points[met]
    fresh = ~met
    if not fresh.any():
        return old.keys, games, points
    where = at[fresh]
    return (
        np.insert(old.keys, where, keys[fresh]),
        np.insert(games, where, count[fresh]),
        np.insert(points, where, lo_points[fresh]),
    )


def _trend_points(s: Session, season_id: int, until: int) -> dict[int, tuple[float, ...]]:
    """Each entry's last TREND_POINTS ratings (its rating before its first match, then after each),
    by a window over its rating changes: only the last TREND_POINTS rows of each entry come back."""
    order = (Match.record_seq.desc(), RatingChange.id.desc())
    inner = (
        select(
            RatingChange.entry_id.label("entry_id"),
            RatingChange.before.label("before"),
            RatingChange.after.label("after"),
            func.row_number().over(partition_by=RatingChange.entry_id, order_by=order).label("rn"),
            func.count().over(partition_by=RatingChange.entry_id).label("cnt"),
        )
        .join(Match, Match.id == RatingChange.match_id)
        .where(Match.season_id == season_id, Match.record_seq < until)
        .subquery()
    )
    rows = s.execute(
        select(inner.c.entry_id, inner.c.before, inner.c.after, inner.c.rn, inner.c.cnt)
        .where(inner.c.rn <= TREND_POINTS)
        .order_by(inner.c.entry_id, inner.c.rn.desc())
    ).all()
    out: dict[int, list[float]] = {}
    for entry_id, before, after, rn, cnt in rows:
        points = out.setdefault(entry_id, [])
        if rn == cnt:  # the entry's first change: its rating before it starts the history
            points.append(before)
        points.append(after)
    return {k: tuple(v[-TREND_POINTS:]) for k, v in out.items()}


def _extend_trends(
    trends: dict[int, tuple[float, ...]], s: Session, season_id: int, since: int, until: int
) -> None:
    """Add the rating changes recorded in [since, until) to each entry's last points."""
    rows = s.execute(
        select(RatingChange.entry_id, RatingChange.before, RatingChange.after)
        .join(Match, Match.id == RatingChange.match_id)
        .where(Match.season_id == season_id, Match.record_seq >= since, Match.record_seq < until)
        .order_by(Match.record_seq, RatingChange.id)
    ).all()
    grown: dict[int, list[float]] = {}
    for entry_id, before, after in rows:
        points = grown.setdefault(entry_id, list(trends.get(entry_id, ())))
        if not points:
            points.append(before)
        points.append(after)
    for entry_id, points in grown.items():
        trends[entry_id] = tuple(points[-TREND_POINTS:])
