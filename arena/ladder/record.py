"""Recording a played match: result, replay, rating changes, the bots' tallies and suspension in ONE
transaction.

Only the runner holding the match's lease may record it, so a match interrupted by a killed worker
and played again is recorded exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import flag_modified, set_committed_value

from arena import metrics
from arena.ladder.matchmaking import RECENT, suspension_reason
from arena.ladder.ratings import count_change, elo_update
from arena.store import MatchResult, Store
from arena.store.models import Entry, Match, MatchLog, RatingChange, Replay, Season, SuspensionKind, utcnow
from arena.store.queue import lock_for_record
from arena.store.repo import suspend_bot
from arena.store.tallies import add_match
from arena.verdicts import is_fault


@dataclass(frozen=True)
class Recorded:
    recorded: bool
    suspended: tuple[str, ...] = ()  # bot names suspended by this result


def record_result(store: Store, owner: str, match_id: int, result: MatchResult) -> Recorded:
    """Write `result` for a match this runner holds; False if the lease was lost (someone else records).

    The season's row is locked, its status checked and its count of recorded results taken (the
    match's `record_seq`) by one UPDATE ... RETURNING, and the entries' new figures go out in one
    batched UPDATE, the bots' tallies in one upsert: eight statements (PostgreSQL) however long the
    history. A stored result is counted (`arena.metrics`) once its transaction has committed."""
    recorded, kind = _write(store, owner, match_id, result)
    if recorded.recorded:
        metrics.match_recorded(kind, result.verdicts)
    return recorded


def _write(store: Store, owner: str, match_id: int, result: MatchResult) -> tuple[Recorded, str]:
    """`record_result`'s transaction: what it recorded, and the match's kind."""
    with store.tx() as s:
        m = lock_for_record(s, owner, match_id)
        if m is None:
            return Recorded(False), ""
        if m.season_id is not None:
            seq = _next_seq(s, m.season_id)
            if seq is None:
                s.delete(m)  # the season was frozen while this match was being played
                return Recorded(False), ""
            m.record_seq = seq
        m.status, m.lease_owner, m.lease_expires = "done", None, None
        m.finished_at = utcnow()
        m.winner, m.void = result.winner, result.void
        m.verdicts, m.verdict_details = list(result.verdicts), list(result.verdict_details)
        m.lines, m.deals_played, m.duration = list(result.lines), result.deals_played, result.duration
        s.add(Replay(match_id=m.id, data=result.replay))
        for seat, text in enumerate(result.logs):
            if text:
                s.add(MatchLog(match_id=m.id, seat=seat, text=text))
        suspended: list[str] = []
        if m.entry0_id is not None and m.entry1_id is not None:
            _rate(s, m, result.score0)
            for seat, entry_id in enumerate((m.entry0_id, m.entry1_id)):
                if is_fault(result.verdicts[seat]):
                    name = _check_suspension(s, entry_id)
                    if name:
                        suspended.append(name)
        add_match(s, m)  # after the entries' locks (`_rate`): one lock order for every recorder
        s.flush()
        return Recorded(True, tuple(suspended)), m.kind


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


_FIGURES = ("rating", "rated", "wins", "draws", "losses")  # what `count_change` may change


def _rate(s: Session, m: Match, score0: float | None) -> None:
    # lock both entries in id order so concurrent recorders on PostgreSQL cannot deadlock
    entry0_id, entry1_id = m.entry0_id, m.entry1_id
    assert entry0_id is not None and entry1_id is not None  # only a match between two entries is rated
    ids = sorted({entry0_id, entry1_id})
    locked = {
        e.id: e
        for e in s.scalars(
            select(Entry).where(Entry.id.in_(ids)).order_by(Entry.id).with_for_update(of=Entry)
        )
    }
    e0, e1 = locked[entry0_id], locked[entry1_id]
    if score0 is None:
        e0.voids += 1
        e1.voids += 1
        return
    c0, c1 = elo_update(e0.rating, e0.rated, e1.rating, e1.rated, score0)
    for entry, change in ((e0, c0), (e1, c1)):
        count_change(entry, change)
        for figure in _FIGURES:  # both rows with the same columns: one batched UPDATE, not two
            flag_modified(entry, figure)
        s.add(
            RatingChange(
                match_id=m.id,
                entry_id=entry.id,
                before=change.before,
                after=change.after,
                k=change.k,
                score=change.score,
            )
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
