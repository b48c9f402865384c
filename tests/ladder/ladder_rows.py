"""Synthetic ladder rows in a real store: a season of `bots` entries and results recorded as
`arena.ladder.record` records them (the match row with the next record_seq, the season's count, both
entries' live Elo and record, one rating change each), without playing: for tests of what the
standings read at a size no played season reaches quickly."""

from __future__ import annotations

import numpy as np
from sqlalchemy import select

from arena.ladder.ratings import count_change, elo_update
from arena.store import Store
from arena.store.models import Bot, BotVersion, Entry, Match, RatingChange, Season


def make_season(store: Store, bots: int, name: str = "big") -> list[int]:
    """A running season of `bots` one-version bots (two owners, alternating); its entry ids."""
    with store.tx() as s:
        season = Season(name=name, status="running", seed=1)
        s.add(season)
        versions = []
        for k in range(bots):
            bot = Bot(name=f"b{k:04d}", owner=f"owner{k % 2}")
            version = BotVersion(bot=bot, number=1, content_hash=f"{k:064x}", path="/nonexistent")
            s.add_all([bot, version])
            versions.append(version)
        s.flush()
        entries = [Entry(season_id=season.id, version_id=v.id) for v in versions]
        s.add_all(entries)
        s.flush()
        return [e.id for e in entries]


def record(store: Store, name: str, results: list[tuple[int, int, int | None]]) -> None:
    """Record (entry0, entry1, winner seat or None for a draw) in order, as record.py does."""
    with store.tx() as s:
        season = s.scalars(select(Season).where(Season.name == name)).one()
        ids = {a for a, _, _ in results} | {b for _, b, _ in results}
        entries = {e.id: e for e in s.scalars(select(Entry).where(Entry.id.in_(ids)))}
        matches = []
        for a, b, winner in results:
            e0, e1 = entries[a], entries[b]
            matches.append(
                Match(
                    season_id=season.id,
                    version0_id=e0.version_id,
                    version1_id=e1.version_id,
                    entry0_id=a,
                    entry1_id=b,
                    seed=season.recorded,
                    status="done",
                    winner=winner,
                    void=False,
                    verdicts=["ok", "ok"],
                    record_seq=season.recorded,
                )
            )
            season.recorded += 1
        s.add_all(matches)
        s.flush()  # the match ids, for the rating changes
        for m, (a, b, winner) in zip(matches, results, strict=True):
            e0, e1 = entries[a], entries[b]
            score0 = 0.5 if winner is None else float(winner == 0)
            c0, c1 = elo_update(e0.rating, e0.rated, e1.rating, e1.rated, score0)
            for entry, change in ((e0, c0), (e1, c1)):
                count_change(entry, change)
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


def random_results(
    entry_ids: list[int], count: int, seed: int, spread: float = 200.0
) -> list[tuple[int, int, int | None]]:
    """`count` results among the entries, by hidden strengths (draws about a tenth of the time)."""
    rng = np.random.default_rng(seed)
    n = len(entry_ids)
    true = np.random.default_rng(0).normal(0.0, spread, n)
    a = rng.integers(0, n, count)
    b = (a + rng.integers(1, n, count)) % n
    p = 1.0 / (1.0 + 10.0 ** ((true[b] - true[a]) / 400.0))
    u = rng.random(count)
    out: list[tuple[int, int, int | None]] = []
    for i, j, pi, ui in zip(a, b, p, u, strict=True):
        winner = 0 if ui < pi - 0.05 else None if ui < pi + 0.05 else 1
        out.append((entry_ids[int(i)], entry_ids[int(j)], winner))
    return out
