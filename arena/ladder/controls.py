"""The organiser's controls over a season: pause and resume it, requeue its failed matches, void a
played match with a stated reason, and recompute its ratings from the stored results.

Every control runs in one transaction with the season's row locked (the recorder's first lock, so
no result is recorded halfway through), writes its line in the organiser's log
(`arena.store.audit`), and bumps the season's `revision` when it changes recorded results, so the
standings caches of every process start afresh. `recompute_ratings` is the rule a void applies: the
live Elo of every entry replayed from the season's counted results in recording order
(`arena.ladder.ratings.replay_elo`), the rule `arena season verify` checks, so a void and the audit
always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from arena.ladder.ratings import replay_elo
from arena.ladder.seasons import SeasonError, _season
from arena.store import Store
from arena.store.audit import Action, record_action
from arena.store.decks import redeal
from arena.store.models import BotTally, Entry, Match, RatingChange, Season, SeasonTally, utcnow
from arena.store.tallies import COUNTED, KEY, add_match, share_rows

REASON_MOST = 500


@dataclass(frozen=True)
class Recomputed:
    """What a recompute changed: entries whose figures moved, rating changes rewritten."""

    season: str
    entries: int
    changed_entries: int
    changed_ratings: int
    results: int  # counted results replayed

    def to_dict(self) -> dict[str, object]:
        return {
            "season": self.season,
            "entries": self.entries,
            "changed_entries": self.changed_entries,
            "changed_ratings": self.changed_ratings,
            "results": self.results,
        }


def pause_season(store: Store, name: str, actor: str, *, on: bool) -> Season:
    """Pause (on) or resume a running or closing season: while paused no match of it is scheduled or
    started; matches already running finish and are recorded. Public: the standings say so."""
    with store.tx() as s:
        season = _season(s, name, lock=True)
        if season.status not in ("running", "closing"):
            raise SeasonError(
                f"season {name!r} is {season.status}; only a running or closing season can be "
                f"{'paused' if on else 'resumed'}"
            )
        if season.paused != on:
            season.paused = on
            record_action(s, actor, Action.PAUSE if on else Action.RESUME, f"season {name}")
        return season


def requeue_failed(store: Store, actor: str, *, season: str = "", match_id: int = 0) -> list[int]:
    """Put failed matches back in the queue, their attempts counted afresh: one match (`match_id`)
    or every failed match of `season`. Returns the ids requeued. A frozen season's are refused."""
    if not season and not match_id:
        raise SeasonError("give a season, or a match id (--match ID), whose failed matches to requeue")
    with store.tx() as s:
        query = select(Match).where(Match.status == "failed")
        if match_id:
            m = s.get(Match, match_id)
            if m is None:
                raise SeasonError(
                    f"no match {match_id}; `arena matches list --status failed` shows the failed ones"
                )
            if m.status != "failed":
                raise SeasonError(
                    f"match {match_id} is {m.status}, not failed: only a failed match is requeued"
                )
            query = query.where(Match.id == match_id)
            if m.season_id is not None:
                _open(s, s.get_one(Season, m.season_id))
        if season:
            found = _season(s, season, lock=True)
            _open(s, found)
            query = query.where(Match.season_id == found.id)
        ids: list[int] = []
        for m in s.scalars(query.order_by(Match.id).with_for_update(of=Match)):
            m.status, m.attempts, m.lease_owner, m.lease_expires = "queued", 0, None, None
            m.started_at, m.finished_at, m.verdict_details = None, None, []
            redeal(s, m)
            ids.append(m.id)
        target = f"match {match_id}" if match_id else f"season {season}"
        record_action(s, actor, Action.REQUEUE, target, f"{len(ids)} requeued: {ids[:20]}")
        return ids


def _open(s: Session, season: Season) -> None:
    if season.status == "frozen":
        raise SeasonError(f"season {season.name!r} is frozen: its failed matches stay failed")


def void_match(store: Store, match_id: int, reason: str, actor: str) -> Match:
    """Void the played match `match_id` for `reason` (required, public): its result no longer
    counts; its rating changes are undone by recomputing its season's ratings from the remaining
    results, and its bots' tallies move its win, draw or loss out."""
    reason = reason.strip()
    if not reason:
        raise SeasonError("a void needs a reason (--reason TEXT): it is shown publicly with the match")
    if len(reason) > REASON_MOST:
        raise SeasonError(f"the reason is {len(reason)} characters long; at most {REASON_MOST}")
    with store.tx() as s:
        found = s.execute(select(Match.season_id).where(Match.id == match_id)).one_or_none()
        if found is None:
            raise SeasonError(f"no match {match_id}; `arena matches list` shows them")
        season = None if found[0] is None else s.get_one(Season, found[0], with_for_update=True)
        m = s.scalars(select(Match).where(Match.id == match_id).with_for_update(of=Match)).one()
        if m.status != "done":
            raise SeasonError(f"match {match_id} is {m.status}: only a played (done) match can be voided")
        if m.void_reason is not None:
            raise SeasonError(f"match {match_id} is void already ({m.void_reason})")
        if m.void:
            raise SeasonError(f"match {match_id} ended void: it has no result to take out")
        _untally(s, m)
        m.void, m.void_reason = True, reason
        add_match(s, m)  # counted again as a void: in `matches` only
        if season is not None:
            _recompute(s, season)
        record_action(s, actor, Action.VOID, f"match {match_id}", reason)
        return m


def _untally(s: Session, m: Match) -> None:
    """Take the match's counts back out of `bot_tallies` (the recorder's `add_match`, reversed)."""
    s.flush()
    for row in s.execute(share_rows(Match.id == m.id)).all():
        key = dict(zip(KEY, row[: len(KEY)], strict=True))
        values = {
            c: getattr(BotTally, c) - int(v or 0) for c, v in zip(COUNTED, row[len(KEY) :], strict=True)
        }
        s.execute(
            update(BotTally)
            .where(*(getattr(BotTally, k) == v for k, v in key.items()))
            .values(**values)
            .execution_options(synchronize_session=False)
        )


def recompute_ratings(store: Store, name: str, actor: str) -> Recomputed:
    """Recompute season `name`'s live ratings, records and rating changes from its stored results."""
    with store.tx() as s:
        season = _season(s, name, lock=True)
        done = _recompute(s, season)
        record_action(
            s,
            actor,
            Action.RECOMPUTE,
            f"season {name}",
            f"{done.changed_entries} entries and {done.changed_ratings} rating changes corrected",
        )
        return done


def _recompute(s: Session, season: Season) -> Recomputed:
    """The season's entries and rating changes as its results say, in the caller's transaction."""
    entries = {
        e.id: e
        for e in s.scalars(
            select(Entry).where(Entry.season_id == season.id).order_by(Entry.id).with_for_update(of=Entry)
        )
    }
    rows: list[tuple[int, int, int, int | None, bool]] = [
        (i, a, b, w, v)
        for i, a, b, w, v in s.execute(
            select(Match.id, Match.entry0_id, Match.entry1_id, Match.winner, Match.void)
            .where(Match.season_id == season.id, Match.status == "done", Match.entry0_id.is_not(None))
            .order_by(Match.record_seq, Match.id)
        ).all()
        if a is not None and b is not None  # a season's matches set both entries together
    ]
    results = [(a, b, None if void else (0.5 if w is None else float(w == 0))) for _, a, b, w, void in rows]
    final, changes = replay_elo(results, {i: e.start_rating for i, e in entries.items()})
    figures = {i: {"rated": 0, "wins": 0, "draws": 0, "losses": 0, "voids": 0} for i in entries}
    stored = {
        (rc.match_id, rc.entry_id): rc
        for rc in s.scalars(
            select(RatingChange)
            .join(Match, Match.id == RatingChange.match_id)
            .where(Match.season_id == season.id)
        )
    }
    rewritten = 0
    void_ids = []
    for (match_id, a, b, _, _), change in zip(rows, changes, strict=True):
        if change is None:
            figures[a]["voids"] += 1
            figures[b]["voids"] += 1
            void_ids.append(match_id)
            continue
        for entry_id, c in ((a, change[0]), (b, change[1])):
            f = figures[entry_id]
            f["rated"] += 1
            f["wins" if c.score == 1.0 else "losses" if c.score == 0.0 else "draws"] += 1
            rc = stored.pop((match_id, entry_id), None)
            if rc is None:
                s.add(
                    RatingChange(
                        match_id=match_id,
                        entry_id=entry_id,
                        before=c.before,
                        after=c.after,
                        k=c.k,
                        score=c.score,
                    )
                )
                rewritten += 1
            elif (rc.before, rc.after, rc.k, rc.score) != (c.before, c.after, c.k, c.score):
                rc.before, rc.after, rc.k, rc.score = c.before, c.after, c.k, c.score
                rewritten += 1
    for rc in stored.values():  # the changes of voided matches, and any a match should not have
        s.delete(rc)
        rewritten += 1
    moved = 0
    for entry_id, e in entries.items():
        want = {"rating": final.get(entry_id, e.start_rating), **figures[entry_id]}
        if any(getattr(e, k) != v for k, v in want.items()):
            moved += 1
            for k, v in want.items():
                setattr(e, k, v)
    season.revision = (season.revision or 0) + 1  # every process's standings caches start afresh
    season.pairing_fitted = None  # and the matchmaking refits before its next pairing
    s.execute(delete(SeasonTally).where(SeasonTally.season_id == season.id))
    s.flush()
    if season.status == "frozen":
        from arena.ladder.standings import compute_standings

        season.standings = [row.to_dict() for row in compute_standings(s, season)]
        season.frozen_at = season.frozen_at or utcnow()
    return Recomputed(season.name, len(entries), moved, rewritten, len(results) - len(void_ids))
