"""Season standings (maximum-likelihood Elo with 95% intervals, live Elo, record) and the audit that
recomputes every live rating from the stored replays."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder.ratings import Fit, fit_ratings, is_provisional, replay_elo
from arena.proto.codec import decode_record
from arena.store import Store
from arena.store.models import Entry, Match, RatingChange, Replay, Season


@dataclass(frozen=True)
class Standing:
    rank: int
    bot: str  # name@version
    owner: str
    elo: float  # season fit
    ci95: float | None  # ± half-width; None before the bot's first counted match
    live_elo: float
    games: int
    wins: int
    draws: int
    losses: int
    provisional: bool
    active: bool

    def to_dict(self) -> dict:
        return asdict(self)


def season_results(s: Session, season_id: int) -> list[tuple[int, int, float]]:
    """(entry0, entry1, score of entry0) for every counted (non-void) match, in recording order."""
    rows = s.execute(
        select(Match.entry0_id, Match.entry1_id, Match.winner)
        .where(
            Match.season_id == season_id,
            Match.status == "done",
            Match.void.is_(False),
            Match.entry0_id.is_not(None),
        )
        .order_by(Match.record_seq)
    ).all()
    return [(a, b, 0.5 if w is None else float(w == 0)) for a, b, w in rows]


def season_fit(s: Session, season: Season) -> tuple[list[Entry], Fit]:
    entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id).order_by(Entry.id)))
    index = {e.id: i for i, e in enumerate(entries)}
    results = season_results(s, season.id)
    a = np.array([index[r[0]] for r in results], dtype=np.int64)
    b = np.array([index[r[1]] for r in results], dtype=np.int64)
    score = np.array([r[2] for r in results], dtype=np.float64)
    return entries, fit_ratings(len(entries), a, b, score)


def compute_standings(s: Session, season: Season) -> list[Standing]:
    entries, fit = season_fit(s, season)
    rows = []
    for i, e in enumerate(entries):
        games = e.wins + e.draws + e.losses
        if games == 0 and not e.active:
            continue
        rows.append((e, float(fit.ratings[i]), round(float(fit.ci95[i]), 1) if games else None, games))
    rows.sort(key=lambda r: (-r[1] if r[3] else float("inf"), r[0].id))
    return [
        Standing(
            rank,
            f"{e.version.bot.name}@{e.version.number}",
            e.version.bot.owner,
            round(elo, 1),
            ci,
            round(e.rating, 1),
            games,
            e.wins,
            e.draws,
            e.losses,
            is_provisional(e.rated),
            e.active,
        )
        for rank, (e, elo, ci, games) in enumerate(rows, 1)
    ]


def standings(store: Store, name: str) -> tuple[Season, list[Standing]]:
    """Frozen standings for a frozen season, live ones otherwise."""
    with store.read() as s:
        season = s.scalar(select(Season).where(Season.name == name))
        if season is None:
            from arena.ladder.seasons import SeasonError

            raise SeasonError(f"no season named {name!r}; `arena season list` shows them")
        if season.status == "frozen" and season.standings is not None:
            return season, [Standing(**row) for row in season.standings]
        return season, compute_standings(s, season)


def los_table(store: Store, name: str) -> tuple[list[str], np.ndarray]:
    """Bot labels and the likelihood-of-superiority matrix of the season fit."""
    with store.read() as s:
        season = s.scalar(select(Season).where(Season.name == name))
        entries, fit = season_fit(s, season)
        return [f"{e.version.bot.name}@{e.version.number}" for e in entries], fit.los()


def verify_ratings(store: Store, name: str) -> list[str]:
    """Recompute live Elo from the stored replays alone; return every mismatch (empty: all equal).

    The result of each match is read from its replay record, not from the match row, so this
    checks that the ratings follow from the replays.
    """
    problems: list[str] = []
    with store.read() as s:
        season = s.scalar(select(Season).where(Season.name == name))
        matches = list(
            s.scalars(
                select(Match)
                .where(Match.season_id == season.id, Match.status == "done", Match.entry0_id.is_not(None))
                .order_by(Match.record_seq)
            )
        )
        results: list[tuple[int, int, float | None]] = []
        for m in matches:
            record = decode_record(s.get_one(Replay, m.id).data)
            res = record.result
            score = None if res.void else (0.5 if res.winner < 0 else float(res.winner == 0))
            results.append((m.entry0_id, m.entry1_id, score))
        final, changes = replay_elo(results)
        stored: dict[int, dict[int, RatingChange]] = {}
        for rc in s.scalars(select(RatingChange).where(RatingChange.match_id.in_([m.id for m in matches]))):
            stored.setdefault(rc.match_id, {})[rc.entry_id] = rc
        for m, change in zip(matches, changes, strict=True):
            got = stored.get(m.id, {})
            if change is None:
                if got:
                    problems.append(f"match {m.id}: replay says void but ratings changed")
                continue
            for entry_id, c in ((m.entry0_id, change[0]), (m.entry1_id, change[1])):
                rc = got.get(entry_id)
                if rc is None or rc.before != c.before or rc.after != c.after:
                    problems.append(
                        f"match {m.id} entry {entry_id}: stored "
                        f"{(rc.before, rc.after) if rc else None} != recomputed {(c.before, c.after)}"
                    )
        for e in s.scalars(select(Entry).where(Entry.season_id == season.id)):
            if e.rating != final.get(e.id, 1500.0):
                problems.append(
                    f"entry {e.id}: stored rating {e.rating} != recomputed {final.get(e.id, 1500.0)}"
                )
    return problems
