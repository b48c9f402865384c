"""Recording a played match: result, replay, rating changes, the bots' tallies and suspension in ONE
transaction.

Only the runner holding the match's lease may record it, so a match interrupted by a killed worker
and played again is recorded exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, or_, select, update
from sqlalchemy.orm import Session, aliased
from sqlalchemy.orm.attributes import set_committed_value
from sqlalchemy.sql.dml import UpdateBase

from arena.ladder.matchmaking import RECENT, suspension_reason
from arena.ladder.ratings import count_change, elo_update
from arena.store import MatchResult, Store
from arena.store.models import Entry, Match, MatchLog, RatingChange, Replay, Season, SuspensionKind, utcnow
from arena.store.queue import lease_held, lock_for_record
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
    and logs, the rating changes and the entries' new figures go out together (`_write`: on
    PostgreSQL one statement), the bots' tallies in one upsert: four statements (PostgreSQL)
    however long the history."""
    with store.tx() as s:
        m, seq = _hold(s, owner, match_id)
        if m is None:
            return Recorded(False)
        done: dict[str, Any] = {}
        if m.season_id is not None:
            if seq is None:
                s.delete(m)  # the season was frozen while this match was being played
                return Recorded(False)
            done["record_seq"] = seq
        done |= {
            "status": "done", "lease_owner": None, "lease_expires": None, "finished_at": utcnow(),
            "winner": result.winner, "void": result.void, "verdicts": list(result.verdicts),
            "verdict_details": list(result.verdict_details), "lines": list(result.lines),
            "deals_played": result.deals_played, "duration": result.duration,
        }  # fmt: skip
        writes: list[UpdateBase] = [insert(Replay).values(match_id=m.id, data=result.replay)]
        logs = [
            {"match_id": m.id, "seat": seat, "text": text} for seat, text in enumerate(result.logs) if text
        ]
        if logs:
            writes.append(insert(MatchLog).values(logs))
        rated = m.entry0_id is not None and m.entry1_id is not None
        if rated:
            writes += _rate(s, m, result.score0)
        writes.append(update(Match).where(Match.id == m.id).values(done))
        _write(s, writes)
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
        return Recorded(True, tuple(suspended))


def _write(s: Session, writes: list[UpdateBase]) -> None:
    """Run the record's writes in order; on PostgreSQL as one statement, each but the last a
    data-modifying WITH of the last (one round trip, not one per table). They touch distinct rows."""
    if s.get_bind().dialect.name == "postgresql":
        last = writes[-1]
        for i, write in enumerate(writes[:-1]):
            last = last.add_cte(write.cte(f"write{i}"))
        writes = [last]
    conn = s.connection()
    for write in writes:
        conn.execute(write)


def _hold(s: Session, owner: str, match_id: int) -> tuple[Match | None, int | None]:
    """The match, row-locked, if this runner still holds its lease (else None), and its season's next
    recording number (`_next_seq`; None without a season, or when it is frozen). On PostgreSQL one
    statement: the match's lock in a WITH that the season's UPDATE reads, so the match is locked
    before the season, as a recorder always locks them, and the season is counted only when the
    lease holds."""
    if s.get_bind().dialect.name != "postgresql":
        m = lock_for_record(s, owner, match_id)
        return m, (_next_seq(s, m.season_id) if m is not None and m.season_id is not None else None)
    held = lease_held(owner, match_id).cte("held")
    bump = (
        update(Season)
        .where(Season.id == select(held.c.season_id).scalar_subquery(), Season.status != "frozen")
        .values(recorded=Season.recorded + 1)
        .returning(Season.recorded)
        .cte("bump")
    )
    row = s.execute(select(aliased(Match, held), select(bump.c.recorded).scalar_subquery())).first()
    if row is None:
        return None, None
    m, taken = row
    return m, None if taken is None else int(taken) - 1


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


@dataclass
class _Figures:
    """An entry's counters as locked and read (`Tallied`), changed here and written back whole."""

    id: int
    rating: float
    rated: int
    wins: int
    draws: int
    losses: int
    voids: int


_FIGURES = ("rating", "rated", "wins", "draws", "losses", "voids")


def _rate(s: Session, m: Match, score0: float | None) -> list[UpdateBase]:
    """Lock both entries and read their counters (in id order, so that concurrent recorders on
    PostgreSQL cannot deadlock); the writes of the result's rating changes and their new counters."""
    entry0_id, entry1_id = m.entry0_id, m.entry1_id
    assert entry0_id is not None and entry1_id is not None  # only a match between two entries is rated
    locked = {
        row.id: _Figures(*row)
        for row in s.execute(
            select(Entry.id, *(getattr(Entry, f) for f in _FIGURES))
            .where(Entry.id.in_(sorted({entry0_id, entry1_id})))
            .order_by(Entry.id)
            .with_for_update(of=Entry)
        )
    }
    e0, e1 = locked[entry0_id], locked[entry1_id]
    writes: list[UpdateBase] = []
    if score0 is None:
        e0.voids += 1
        e1.voids += 1
    else:
        c0, c1 = elo_update(e0.rating, e0.rated, e1.rating, e1.rated, score0)
        for entry, change in ((e0, c0), (e1, c1)):
            count_change(entry, change)
        writes.append(
            insert(RatingChange).values(
                [
                    {
                        "match_id": m.id,
                        "entry_id": entry.id,
                        "before": change.before,
                        "after": change.after,
                        "k": change.k,
                        "score": change.score,
                    }  # fmt: skip
                    for entry, change in ((e0, c0), (e1, c1))
                ]
            )
        )
    for entry in locked.values():  # one write per entry, of its counters after both seats
        writes.append(
            update(Entry).where(Entry.id == entry.id).values({f: getattr(entry, f) for f in _FIGURES})
        )
    return writes


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
