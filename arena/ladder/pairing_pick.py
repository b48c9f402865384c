"""The matchmaking's rule (`arena.ladder.matchmaking.pick_pairing`) as one SQL query, so a pairing
brings back one row (its two entries), not every entry of the season, and reads no history (issue
#30). The database still reads the season's active entries: O(entries) per pairing, in SQL.

The candidates are the season's active entries with what `pick_pairing` looks at: the owner, the
rating paired on (the stored pairing fit, `entries.pairing_elo`, else live Elo), the matches so far
(the entry's own counters plus its queued, running and failed matches: those are found by
`ix_matches_claim`, whatever the history), when it was last paired, and whether it is busy (in a
queued or running match). The first is the longest-waiting entry; the second the nearest in rating
to the first's plus the random offset, idle ones before busy ones, and those under the repeat cap
and within reach (`matchmaking.over_cap`) before the rest. The cap counts the first's matches with
each other entry: its matches read from `ix_matches_entry0` and `ix_matches_entry1` alone (they
hold the other seat's entry, migration 0019): O(the first's matches), one entry's, not the season's. Ties fall as in Python: every ordering ends on the entry
id. tests/ladder/test_pairing_pick.py checks the query against `pick_pairing` on random fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

from sqlalchemy import (
    CTE,
    BindParameter,
    ColumnElement,
    Float,
    Integer,
    Select,
    and_,
    bindparam,
    case,
    func,
    literal,
    select,
    true,
    union_all,
)
from sqlalchemy.orm import Session

from arena.ladder.matchmaking import REACH
from arena.ladder.queries import MatchKind
from arena.store.models import Bot, BotVersion, Entry, Match

HELD = ("queued", "running", "failed")  # the matches an entry has, beyond its recorded counters
BUSY = ("queued", "running")
# every kind (a closed set): named so that `ix_matches_claim` (status, kind, season_id) serves the
# held matches on SQLite too, whose planner otherwise reads the season's history by its season_id index
KINDS = tuple(k.value for k in MatchKind)


class Seat(NamedTuple):
    """One side of a new pairing: the entry and its bot version."""

    entry_id: int
    version_id: int


def pick_in_sql(s: Session, season_id: int, offset: float, *, same_owner: bool) -> tuple[Seat, Seat] | None:
    """The next pairing of the season's active entries as `pick_pairing` makes it when its random
    draw is `offset` (first = the longest-waiting entry), or None when no two entries may meet."""
    # the longest-waiting entry goes first: when it has nobody to meet, all are of one owner (or
    # it is alone), so nobody has, and `pick_pairing`'s search for a first that has one finds none
    query = pick_query(s.get_bind().dialect.name, same_owner)
    return seats(s.execute(query, {"season_id": season_id, "offset": offset}).first())


def seats(row: Sequence[Any] | None) -> tuple[Seat, Seat] | None:
    """The pairing of a row of `pick_query` (first id and version, other id and version); None for
    no row, or a row of NULLs (the query outer-joined to another that found no pairing)."""
    if row is None or row[0] is None:
        return None
    return Seat(row[0], row[1]), Seat(row[2], row[3])


@cache
def pick_query(dialect: str, same_owner: bool) -> Select[Any]:
    """`pick_in_sql`'s query for a dialect and owner rule, its `season_id` and `offset` bound at
    execution; built once a process (building it cost a third of a pairing's time on the L store)."""
    m, e = Match.__table__, Entry.__table__
    season_id = bindparam("season_id", type_=Integer())
    # PostgreSQL reads them from `ix_matches_held` alone; SQLite through `ix_matches_claim` (KINDS)
    kinds = [] if dialect == "postgresql" else [m.c.kind.in_(KINDS)]
    held = union_all(
        *(
            select(seat.label("entry_id"), m.c.status).where(
                m.c.status.in_([literal(x, literal_execute=True) for x in HELD]),  # as the index's WHERE
                *kinds,
                m.c.season_id == season_id,
            )
            for seat in (m.c.entry0_id, m.c.entry1_id)
        )
    ).subquery("held")
    load = (
        select(
            held.c.entry_id,
            func.count().label("n"),
            func.max(case((held.c.status.in_(BUSY), 1), else_=0)).label("busy"),
        )
        .group_by(held.c.entry_id)
        .subquery("load")
    )
    cand = (
        select(
            e.c.id,
            e.c.version_id,
            func.coalesce(e.c.pairing_elo, e.c.rating).label("rating"),
            (e.c.wins + e.c.draws + e.c.losses + e.c.voids + func.coalesce(load.c.n, 0)).label("games"),
            e.c.last_scheduled,
            func.coalesce(load.c.busy, 0).label("busy"),
        )
        .select_from(e)
        .outerjoin(load, load.c.entry_id == e.c.id)
        .where(e.c.season_id == season_id, e.c.active.is_(True))
        .cte("cand")
    )
    return _pairing(cand, bindparam("offset", type_=Float()), same_owner)


def _pairing(cand: CTE, offset: BindParameter[float], same_owner: bool) -> Select[Any]:
    """The first of the candidates `cand` by waiting order, and its opponent among them."""
    m = Match.__table__
    first = (
        select(cand)
        .order_by(cand.c.busy, cand.c.games > 0, cand.c.last_scheduled, cand.c.id)
        .limit(1)
        .cte("first")
    )
    # the first's matches with each other entry, from its own matches alone (the entry indexes)
    first_id = select(first.c.id).scalar_subquery()  # one value: each side is an index lookup
    seen = union_all(
        *(
            select(theirs.label("entry_id")).where(mine == first_id)
            for mine, theirs in ((m.c.entry0_id, m.c.entry1_id), (m.c.entry1_id, m.c.entry0_id))
        )
    ).subquery("seen")
    met = select(seen.c.entry_id, func.count().label("n")).group_by(seen.c.entry_id).subquery("met")
    field = select(func.count() - 1).select_from(cand).scalar_subquery()  # the other active entries
    other = cand.alias("other")
    n = func.coalesce(met.c.n, 0)
    over = case(
        (func.abs(other.c.rating - first.c.rating) > REACH, 1),
        (and_(n >= 1, n * field >= first.c.games), 1),
        else_=0,
    )
    return (
        select(
            first.c.id.label("first_id"),
            first.c.version_id.label("first_version"),
            other.c.id.label("other_id"),
            other.c.version_id.label("other_version"),
        )
        .join_from(
            first,
            other,
            and_(other.c.id != first.c.id, true() if same_owner else _not_owned_as(first, other)),
        )
        .outerjoin(met, met.c.entry_id == other.c.id)
        .order_by(
            other.c.busy,
            over,
            func.abs(other.c.rating - (first.c.rating + offset)),
            other.c.last_scheduled,
            other.c.id,
        )
        .limit(1)
    )


def _not_owned_as(first: CTE, other: Any) -> ColumnElement[bool]:
    """SQL: `other`'s version is not of a bot of the owner of `first`'s. The owner's versions are
    found once (a subquery that does not depend on the row: hashed), so no candidate is joined to
    the registry: only the first's owner is looked up."""
    v, b = BotVersion.__table__, Bot.__table__
    fv, fb = v.alias("first_version"), b.alias("first_bot")
    owner = (
        select(fb.c.owner)
        .select_from(first.join(fv, fv.c.id == first.c.version_id).join(fb, fb.c.id == fv.c.bot_id))
        .correlate(None)
        .scalar_subquery()
    )
    owned = select(v.c.id).join_from(v, b, b.c.id == v.c.bot_id).where(b.c.owner == owner).correlate(None)
    return other.c.version_id.not_in(owned)
