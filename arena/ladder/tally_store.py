"""A season's tally saved in the store (`season_tallies`, migration 0012), so that a new process (the
`arena standings` command, a restarted server) starts from it and reads only the results recorded
since, instead of aggregating the whole season and fitting it cold (issue #30: 44 s at 1M results).

What is saved is what `arena.ladder.tally.Tally` holds, as of `recorded` results: the results per pair
of entries, each entry's last rating points (the trend), and the ratings of the fit made from them
(the next fit's warm start). It is a cache of what the matches and rating changes say: results are
only ever appended (each takes the next `record_seq`), so a tally of `recorded` results plus those
with `record_seq >= recorded` is the season's. One row per season, replaced by a newer one only.

The format is a numpy `.npz` read with `allow_pickle=False` (never a pickle); a row of another
FORMAT, or of more results than the season holds (a season rewound), is ignored.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
from sqlalchemy import Connection, Engine, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from arena.store.db import SQLITE_BUSY_SECONDS
from arena.store.models import Season, SeasonTally, utcnow

if TYPE_CHECKING:
    from arena.ladder.tally import Tally

log = logging.getLogger(__name__)

FORMAT = 1  # the layout below; another one is ignored (and replaced at the next save)
SAVE_EVERY = 1_000  # results: a tally is saved again once this many more were recorded ...
SAVE_SHARE = 100  # ... and at least a hundredth of those it holds (1M results: every 10,000)


def save_due(saved: int | None, recorded: int) -> bool:
    """Whether a tally of `recorded` results is worth saving over the saved one of `saved` (None:
    none saved): a new process then folds in at most about 1% of the season, or SAVE_EVERY results."""
    if saved is None or recorded < saved:
        return True
    return recorded - saved >= max(SAVE_EVERY, saved // SAVE_SHARE)


def encode(tally: Tally, warm: tuple[np.ndarray, np.ndarray] | None) -> bytes:
    """The tally and the fit's ratings by entry id (`warm`: sorted ids, ratings; NaN unrated)."""
    from arena.ladder.tally import TREND_POINTS

    trend_ids = np.array(sorted(tally.trends), dtype=np.int64)
    lengths = np.array([len(tally.trends[k]) for k in trend_ids.tolist()], dtype=np.int64)
    points = np.full((len(trend_ids), TREND_POINTS), np.nan)
    for row, key in enumerate(trend_ids.tolist()):
        values = tally.trends[key]
        points[row, : len(values)] = values
    ids, ratings = warm if warm is not None else (np.zeros(0, dtype=np.int64), np.zeros(0))
    out = io.BytesIO()
    np.savez(
        out,
        format=np.array([FORMAT, tally.recorded], dtype=np.int64),
        keys=tally.keys.astype(np.int64),
        games=tally.games.astype(np.float64),
        points=tally.points.astype(np.float64),
        trend_ids=trend_ids,
        trend_lengths=lengths,
        trend_points=points,
        warm_ids=np.asarray(ids, dtype=np.int64),
        warm_ratings=np.asarray(ratings, dtype=np.float64),
    )
    return out.getvalue()


def decode(data: bytes) -> Tally | None:
    """The saved tally (its `warm` start included), or None for a row of another FORMAT."""
    from arena.ladder.tally import Tally

    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        head = z["format"]
        if len(head) != 2 or int(head[0]) != FORMAT:
            return None
        lengths = z["trend_lengths"].tolist()
        points = z["trend_points"]
        trends = {
            int(key): tuple(float(x) for x in points[row, :length])
            for row, (key, length) in enumerate(zip(z["trend_ids"].tolist(), lengths, strict=True))
        }
        warm = (z["warm_ids"], z["warm_ratings"]) if len(z["warm_ids"]) else None
        return Tally(int(head[1]), z["keys"], z["games"], z["points"], trends, None, warm)


def load(s: Session, season_id: int, recorded: int) -> Tally | None:
    """The season's saved tally if it holds at most `recorded` results (else None: none saved, another
    format, or a rewound season)."""
    row = s.execute(
        select(SeasonTally.recorded, SeasonTally.data).where(SeasonTally.season_id == season_id)
    ).one_or_none()
    if row is None or row.recorded > recorded:
        return None
    try:
        return decode(row.data)
    except (ValueError, KeyError, OSError) as exc:  # a damaged row is a cache miss, not an error
        log.warning("season %s: saved tally unreadable (%s); tallying afresh", season_id, exc)
        return None


SAVE_BUSY_MS = 200  # SQLite: a save waits this long for the write lock, then is skipped (next time)


def save(
    engine: Engine,
    season_id: int,
    tally: Tally,
    warm: tuple[np.ndarray, np.ndarray] | None,
    revision: int | None = None,
) -> bool:
    """Save the tally in its own short transaction, unless a tally of as many results or more (and no
    more than the season holds) is saved already. A failure (SQLite's write lock busy for over
    SAVE_BUSY_MS, a concurrent first save) is logged and skipped: the next save tries again. True if
    saved. A tally made at another `revision` of the season than its
    current one is never saved: the organiser has voided or recomputed results since."""
    data = encode(tally, warm)
    try:
        with engine.connect() as conn, _short_wait(conn), Session(bind=conn) as w:
            row = w.get(SeasonTally, season_id, with_for_update=True)
            if revision is not None and _revision(w, season_id) != revision:
                return False  # the organiser corrected the season's results since this was tallied
            if row is None:
                w.add(SeasonTally(season_id=season_id, recorded=tally.recorded, data=data, saved_at=utcnow()))
            elif (
                row.recorded < tally.recorded
                or _other_format(row.data)
                or row.recorded > _count(w, season_id)
            ):
                row.recorded, row.data, row.saved_at = tally.recorded, data, utcnow()
            else:
                return False
            w.commit()
    except SQLAlchemyError as exc:
        log.info("season %s: tally of %s results not saved (%s)", season_id, tally.recorded, exc)
        return False
    return True


@contextmanager
def _short_wait(conn: Connection) -> Iterator[None]:
    """On SQLite, wait SAVE_BUSY_MS at most for the write lock (a page load must not queue behind a
    season's writer for a cache); the connection's own busy timeout again afterwards."""
    if conn.dialect.name != "sqlite":
        yield
        return
    dbapi = conn.connection.dbapi_connection
    assert dbapi is not None  # a checked-out connection
    dbapi.execute(f"PRAGMA busy_timeout={SAVE_BUSY_MS}")
    try:
        yield
    finally:
        dbapi.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_SECONDS * 1000}")


def _revision(s: Session, season_id: int) -> int:
    """The season's revision now (`arena.ladder.controls` bumps it on every void and recompute)."""
    return int(s.scalar(select(Season.revision).where(Season.id == season_id)) or 0)


def _count(s: Session, season_id: int) -> int:
    """The season's recorded results now (a saved tally of more is from a rewound season)."""
    return int(s.scalar(select(Season.recorded).where(Season.id == season_id)) or 0)


def _other_format(data: bytes) -> bool:
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return int(z["format"][0]) != FORMAT
    except (ValueError, KeyError, OSError, IndexError):
        return True
