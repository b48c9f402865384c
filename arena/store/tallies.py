"""Each bot's results counted as they are recorded (`bot_tallies`): per opponent bot and per its own
verdict, its finished matches and of those its wins, draws and losses.

A bot's page shows its verdict counts and head-to-head; counted from its matches, they cost a read
of its whole history on every view. The recorder adds each finished match here instead, in its own
transaction (`add_match`), so the page reads one row per opponent and verdict. Finished matches are
never changed or deleted, so the counts only grow. `recount` rebuilds the table from the matches
(migration 0011, and stores written in bulk).

`share_rows` is the one rule of what finished matches count for whom, in SQL, used by all three and
by the read that takes the still-sealed matches back out (`arena.ladder.queries.bot_record`): a
seat's verdict (OK for a record without two verdicts), and unless the match is void a win, a draw
(no winner) or a loss. A match of a bot against itself counts once, from seat 0.
"""

from __future__ import annotations

from functools import cache

from sqlalchemy import (
    ColumnElement,
    Connection,
    Executable,
    Select,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    select,
    union_all,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, aliased

from arena.store.models import BotTally, BotVersion, Match
from arena.verdicts import Verdict

COUNTED = ("matches", "wins", "draws", "losses")
KEY = ("bot_id", "opponent_id", "verdict")


def _seat_verdict(seat: int) -> ColumnElement[str]:
    """The seat's verdict as stored: its element of a two-verdict list, else OK."""
    two = Match.verdicts[1].as_string().is_not(None) & Match.verdicts[2].as_string().is_(None)
    return case(
        (two, func.coalesce(Match.verdicts[seat].as_string(), Verdict.OK.value)), else_=Verdict.OK.value
    )


def _seat_rows(seat: int, where: tuple[ColumnElement[bool], ...]) -> Select:
    v0, v1 = aliased(BotVersion, name="v0"), aliased(BotVersion, name="v1")
    me, other = (v0, v1) if seat == 0 else (v1, v0)
    played = Match.void.is_not(True)

    def flag(test: ColumnElement[bool]) -> ColumnElement[int]:
        return case((played & test, 1), else_=0)

    q = (
        select(
            me.bot_id.label("bot_id"),
            other.bot_id.label("opponent_id"),
            _seat_verdict(seat).label("verdict"),
            flag(Match.winner == seat).label("win"),
            flag(Match.winner.is_(None)).label("draw"),
            flag(Match.winner != seat).label("loss"),
        )
        .select_from(Match)
        .join(v0, v0.id == Match.version0_id)
        .join(v1, v1.id == Match.version1_id)
        .where(Match.status == "done", *where)
    )
    return q.where(v0.bot_id != v1.bot_id) if seat == 1 else q


def share_rows(*where: ColumnElement[bool], bot_id: int | None = None) -> Select:
    """SQL: the finished matches that fit `where`, counted per bot, opponent bot and the bot's own
    verdict, as (bot_id, opponent_id, verdict, matches, wins, draws, losses); only `bot_id`'s rows
    when given."""
    both = union_all(_seat_rows(0, where), _seat_rows(1, where)).subquery("shares")
    q = select(
        both.c.bot_id,
        both.c.opponent_id,
        both.c.verdict,
        func.count().label("matches"),
        func.sum(both.c.win).label("wins"),
        func.sum(both.c.draw).label("draws"),
        func.sum(both.c.loss).label("losses"),
    ).group_by(both.c.bot_id, both.c.opponent_id, both.c.verdict)
    return q.where(both.c.bot_id == bot_id) if bot_id is not None else q.where(literal(True))


def add_match(s: Session, m: Match) -> None:
    """Count the finished match `m` in the recorder's transaction: one upsert of its rows (two, or one
    against itself), read from the row just written, in key order, so that two recorders on
    PostgreSQL lock the rows they share in the same order (no deadlock between a ladder match and a
    challenge of the same two bots)."""
    s.flush()
    # on the connection: Core, not the ORM's bulk insert (which would take the parameters for rows)
    s.connection().execute(_upsert(s.get_bind().dialect.name), {"match_id": m.id})


@cache
def _upsert(dialect: str) -> Executable:
    """`add_match`'s statement for a dialect, built once a process: building it (two seats' joins
    and JSON verdict expressions) cost more than running it (issue #30)."""
    rows = share_rows(Match.id == bindparam("match_id"))
    rows = rows.order_by(*list(rows.selected_columns)[: len(KEY)])
    upsert = (postgresql.insert if dialect == "postgresql" else sqlite.insert)(BotTally).from_select(
        [*KEY, *COUNTED], rows
    )
    return upsert.on_conflict_do_update(
        index_elements=list(KEY),
        set_={c: getattr(BotTally, c) + getattr(upsert.excluded, c) for c in COUNTED},
    )


def recount(conn: Connection | Session) -> None:
    """Rebuild `bot_tallies` from the finished matches, in one INSERT ... SELECT run by the database,
    in key order, so that each bot's rows lie together (its page reads a few blocks, not one per row)."""
    conn.execute(delete(BotTally))
    rows = share_rows()
    conn.execute(
        insert(BotTally).from_select(
            [*KEY, *COUNTED], rows.order_by(*list(rows.selected_columns)[: len(KEY)])
        )
    )
