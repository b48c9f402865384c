"""Recording a played match: result, replay, rating changes, the bots' tallies and suspension in ONE
transaction.

Only the runner holding the match's lease may record it, so a match interrupted by a killed worker
and played again is recorded exactly once.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import bindparam, or_, select, update
from sqlalchemy.orm import Session, aliased
from sqlalchemy.orm.attributes import set_committed_value

from arena import metrics
from arena.ladder.matchmaking import RECENT, suspension_reason
from arena.ladder.ratings import count_change, elo_update
from arena.ladder.record_writes import FIGURES, Shape, params, write
from arena.store import MatchResult, Store
from arena.store.models import Entry, Match, Season, SuspensionKind, utcnow
from arena.store.queue import LEASE_HELD, lock_for_record
from arena.store.repo import suspend_bot
from arena.store.tallies import add_match
from arena.verdicts import is_fault


@dataclass(frozen=True)
class Recorded:
    recorded: bool
    suspended: tuple[str, ...] = ()  # bot names suspended by this result


def record_result(store: Store, owner: str, match_id: int, result: MatchResult) -> Recorded:
    """Write `result` for a match this runner holds; False if the lease was lost (someone else records).

    The match is locked under its lease and its season's row locked, its status checked and its
    count of recorded results taken (the match's `record_seq`), on PostgreSQL in one statement
    (`_hold`); the entries are locked and their figures read in one SELECT; the match, its replay
    and logs, the rating changes and the entries' new figures go out together (`record_writes`: on
    PostgreSQL one statement), the bots' tallies in one upsert: four statements (PostgreSQL)
    however long the history. A stored result is counted (`arena.metrics`) once its
    transaction has committed."""
    recorded, kind = _write(store, owner, match_id, result)
    if recorded.recorded:
        metrics.match_recorded(kind, result.verdicts)
    return recorded


def _write(store: Store, owner: str, match_id: int, result: MatchResult) -> tuple[Recorded, str]:
    """`record_result`'s transaction: what it recorded, and the match's kind."""
    with store.tx() as s:
        m, seq = _hold(s, owner, match_id)
        if m is None:
            return Recorded(False), ""
        done: dict[str, Any] = {
            "status": "done", "lease_owner": None, "lease_expires": None, "finished_at": utcnow(),
            "winner": result.winner, "void": result.void, "verdicts": list(result.verdicts),
            "verdict_details": list(result.verdict_details), "lines": list(result.lines),
            "deals_played": result.deals_played, "duration": result.duration,
        }  # fmt: skip
        if m.season_id is not None:
            if seq is None:
                s.delete(m)  # the season was frozen while this match was being played
                return Recorded(False), ""
            done["record_seq"] = seq
        logs = {seat: text for seat, text in enumerate(result.logs) if text}
        rated = m.entry0_id is not None and m.entry1_id is not None
        changes, entries = _rate(s, m, result.score0) if rated else ([], [])
        shape = Shape(seq=seq is not None, logs=tuple(logs), changes=bool(changes), entries=len(entries))
        write(s, shape, params(m.id, done, result.replay, logs, changes, entries))
        for column, value in done.items():  # the loaded row as written (later reads of it in this session)
            set_committed_value(m, column, value)
        suspended: list[str] = []
        if rated:
            for seat, entry_id in enumerate((m.entry0_id, m.entry1_id)):
                if entry_id is not None and is_fault(result.verdicts[seat]):
                    name = _check_suspension(s, entry_id)
                    if name:
                        suspended.append(name)
        add_match(s, m)  # after the entries' locks (`_rate`): one lock order for every recorder
        s.flush()
        return Recorded(True, tuple(suspended)), m.kind


def _hold(s: Session, owner: str, match_id: int) -> tuple[Match | None, int | None]:
    """The match, row-locked, if this runner still holds its lease (else None), and its season's next
    recording number (`_next_seq`; None without a season, or when it is frozen). On PostgreSQL one
    statement: the match's lock in a WITH that the season's UPDATE reads, so the match is locked
    before the season, as a recorder always locks them, and the season is counted only when the
    lease holds."""
    if s.get_bind().dialect.name != "postgresql":
        m = lock_for_record(s, owner, match_id)
        return m, (_next_seq(s, m.season_id) if m is not None and m.season_id is not None else None)
    row = s.execute(_HOLD, {"lease_match": match_id, "lease_holder": owner}).first()
    if row is None:
        return None, None
    m, taken = row
    return m, None if taken is None else int(taken) - 1


_HELD = LEASE_HELD.cte("held")
_BUMP = (
    update(Season)
    .where(Season.id == select(_HELD.c.season_id).scalar_subquery(), Season.status != "frozen")
    .values(recorded=Season.recorded + 1)
    .returning(Season.recorded)
    .cte("bump")
)
_HOLD = select(aliased(Match, _HELD), select(_BUMP.c.recorded).scalar_subquery())  # built once: see `_hold`


def _next_seq(s: Session, season_id: int) -> int | None:
    """Lock the season's row and take its next recording number (`Season.recorded`, then one more);
    None when the season is frozen (or gone). One statement where a locking read and an UPDATE were."""
    taken = s.execute(
        update(Season)
        .where(Season.id == season_id, Season.status != "frozen")
        .values(recorded=Season.recorded + 1)
        .returning(Season.recorded)
        .execution_options(synchronize_session=False)
    ).scalar()
    if taken is None:
        return None
    season = s.identity_map.get(s.identity_key(Season, season_id))  # none in a fresh transaction
    if season is not None:
        set_committed_value(season, "recorded", taken)
    return int(taken) - 1


def _rate(s: Session, m: Match, score0: float | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Lock both entries and read their figures (in id order, so that concurrent recorders on
    PostgreSQL cannot deadlock); the result's rating changes (none for a void) and each entry's new
    figures, after both seats."""
    entry0_id, entry1_id = m.entry0_id, m.entry1_id
    assert entry0_id is not None and entry1_id is not None  # only a match between two entries is rated
    locked = {
        row.id: _Figures(*row) for row in s.execute(_LOCK_ENTRIES, {"ids": sorted({entry0_id, entry1_id})})
    }
    e0, e1 = locked[entry0_id], locked[entry1_id]
    changes: list[dict[str, Any]] = []
    if score0 is None:
        e0.voids += 1
        e1.voids += 1
    else:
        c0, c1 = elo_update(e0.rating, e0.rated, e1.rating, e1.rated, score0)
        for entry, change in ((e0, c0), (e1, c1)):
            count_change(entry, change)
            changes.append({"entry_id": entry.id, "before": change.before, "after": change.after,
                            "k": change.k, "score": change.score})  # fmt: skip
    return changes, [asdict(entry) for entry in locked.values()]


@dataclass
class _Figures:
    """An entry's figures as locked and read (`Tallied`), changed here and written back whole."""

    id: int
    rating: float
    rated: int
    wins: int
    draws: int
    losses: int
    voids: int


_LOCK_ENTRIES = (
    select(Entry.id, *(getattr(Entry, f) for f in FIGURES))
    .where(Entry.id.in_(bindparam("ids", expanding=True)))
    .order_by(Entry.id)
    .with_for_update(of=Entry)
)


def _check_suspension(s: Session, entry_id: int) -> str | None:
    entry = s.get_one(Entry, entry_id)
    recent = list(
        s.scalars(
            select(Match)
            .where(Match.status == "done", or_(Match.entry0_id == entry_id, Match.entry1_id == entry_id))
            .order_by(Match.record_seq.desc(), Match.id.desc())
            .limit(RECENT)
        )
    )
    # verdicts and match ids only: a verdict detail may quote the bot, and the reason is public
    own = [(m.verdicts[0 if m.entry0_id == entry_id else 1], m.id) for m in reversed(recent)]
    reason = suspension_reason(own)
    if reason is None or entry.version.bot.suspended:
        return None
    label = f"{entry.version.bot.name}@{entry.version.number}"
    suspend_bot(s, entry.version.bot_id, f"{label} {reason}", SuspensionKind.FAULTS)  # a new version lifts it
    return entry.version.bot.name
