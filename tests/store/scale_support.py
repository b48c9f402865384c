"""A synthetic ladder written in bulk, for the tests of query counts, plans and keyset pages.

`fill` writes one season of `matches` finished ladder matches between `bots` bots (duplicate pairs:
twins share seed and pair, seats swapped), with rating changes and the bots' tallies, plus `open_pairs` pairs whose first
twin is done and whose second is still queued (so the reveal test has sealed matches to find). Rows
go in with one executemany per table: thousands of rows in well under a second on either database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import event, insert, select

from arena.store import Store
from arena.store.models import Bot, BotVersion, Entry, Match, RatingChange, Season
from arena.store.tallies import recount


@contextmanager
def counted(store: Store) -> Iterator[list[str]]:
    """The SQL statements the store's engine sends while the block runs."""
    statements: list[str] = []

    def note(_conn, _cursor, statement, _params, _context, _many) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        yield statements
    finally:
        event.remove(store.engine, "before_cursor_execute", note)


@dataclass
class Ladder:
    season_id: int
    season: str
    bots: list[str]
    versions: list[int]  # version id per bot
    entries: list[int]  # entry id per bot
    sealed: list[int]  # done matches whose twin is queued


def fill(store: Store, *, matches: int, bots: int = 12, open_pairs: int = 3, name: str = "big") -> Ladder:
    start = datetime(2026, 1, 1)
    with store.tx() as s:
        season = Season(name=name, seed=7, status="running", duplicate=True)
        s.add(season)
        s.flush()
        names = [f"{name}-bot{i}" for i in range(bots)]
        s.execute(insert(Bot), [{"name": n, "owner": f"owner{i}"} for i, n in enumerate(names)])
        bot_ids = dict(s.execute(select(Bot.name, Bot.id).where(Bot.name.in_(names))).all())
        s.execute(
            insert(BotVersion),
            [{"bot_id": bot_ids[n], "number": 1, "content_hash": f"{n:0>64}", "path": "/x"} for n in names],
        )
        vid = dict(s.execute(select(BotVersion.bot_id, BotVersion.id)).all())
        versions = [vid[bot_ids[n]] for n in names]
        s.execute(insert(Entry), [{"season_id": season.id, "version_id": v} for v in versions])
        eid = dict(s.execute(select(Entry.version_id, Entry.id).where(Entry.season_id == season.id)).all())
        entries = [eid[v] for v in versions]
        rows = []
        for i in range(matches):
            pair, twin = divmod(i, 2)
            a, b = pair % bots, (pair * 7 + 1 + pair // bots) % bots
            if a == b:
                b = (b + 1) % bots
            x, y = (a, b) if twin == 0 else (b, a)
            verdicts = ["OK", "CRASH"] if i % 97 == 5 else ["OK", "OK"]
            rows.append(_match(season.id, pair, x, y, versions, entries, i, "done", verdicts, start))
        sealed_pairs = range(matches // 2, matches // 2 + open_pairs)
        for n, pair in enumerate(sealed_pairs):
            for twin, status in enumerate(("done", "queued")):
                a, b = n % bots, (n + 1) % bots
                x, y = (a, b) if twin == 0 else (b, a)
                rows.append(
                    _match(
                        season.id,
                        pair,
                        x,
                        y,
                        versions,
                        entries,
                        matches + 2 * n + twin,
                        status,
                        ["OK"] * 2,
                        start,
                    )
                )
        s.execute(insert(Match), rows)
        season.recorded = sum(1 for r in rows if r["status"] == "done")
        season.scheduled = matches // 2 + open_pairs
        done = s.execute(
            select(Match.id, Match.entry0_id, Match.entry1_id).where(Match.status == "done")
        ).all()
        s.execute(
            insert(RatingChange),
            [
                {
                    "match_id": mid,
                    "entry_id": e,
                    "before": 1500.0,
                    "after": 1500.0 + seat,
                    "k": 40.0,
                    "score": 0.5,
                }
                for mid, e0, e1 in done
                for seat, e in enumerate((e0, e1))
            ],
        )
        sealed = list(
            s.scalars(
                select(Match.id).where(
                    Match.status == "done", Match.pair.in_(list(sealed_pairs)), Match.season_id == season.id
                )
            )
        )
        recount(s)  # the bots' tallies, as the recorder keeps them
        return Ladder(season.id, name, names, versions, entries, sealed)


def _match(
    season_id: int,
    pair: int,
    x: int,
    y: int,
    versions: list[int],
    entries: list[int],
    i: int,
    status: str,
    verdicts: list[str],
    start: datetime,
) -> dict:
    done = status == "done"
    return {
        "season_id": season_id,
        "kind": "ladder",
        "pair": pair,
        "version0_id": versions[x],
        "version1_id": versions[y],
        "entry0_id": entries[x],
        "entry1_id": entries[y],
        "rules": [],
        "time_control": {},
        "seed": 1_000_003 * pair + 17,
        "salt": "00",
        "commitment": "c",
        "status": status,
        "attempts": 1,
        "created_at": start + timedelta(seconds=i),
        "finished_at": start + timedelta(seconds=i + 1) if done else None,
        "record_seq": i if done else None,
        "winner": i % 2 if done else None,
        "void": False,
        "verdicts": verdicts if done else [],
        "verdict_details": [],
        "lines": [1, 0] if done else [],
        "deals_played": 1 if done else 0,
    }


def record_one(store: Store, ladder: Ladder, pair: int) -> int:
    """A new finished match (a pairing played since), as `record_result` would leave it; its id."""
    with store.tx() as s:
        season = s.get_one(Season, ladder.season_id)
        row = _match(
            ladder.season_id,
            pair,
            0,
            1,
            ladder.versions,
            ladder.entries,
            season.recorded,
            "done",
            ["OK"] * 2,
            datetime(2026, 2, 1),
        )
        row["record_seq"] = season.recorded
        season.recorded += 1
        return int(s.execute(insert(Match).values(**row).returning(Match.id)).scalar_one())
