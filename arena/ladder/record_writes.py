"""The writes of a recorded result (`arena.ladder.record`): the match's finished row, its replay and
logs, the rating changes and the entries' new figures, as statements with bound parameters.

They are built once per shape (whether the match takes a recording number, which seats left
output, whether the result is rated, how many distinct entries it changes) and dialect, so that each
result only binds its values: building and compiling them anew cost more than running them (issue
#30). On PostgreSQL they are one statement, each write but the last a data-modifying WITH of the
last: one round trip, not one per table; they touch distinct rows, so their order does not matter.
SQLite runs them one by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import BindParameter, Executable, bindparam, insert, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import UpdateBase

from arena.store.models import Entry, Match, MatchLog, RatingChange, Replay

#: What recording sets on the match's row (and `record_seq` when it has a season).
DONE = ("status", "lease_owner", "lease_expires", "finished_at", "winner", "void", "verdicts",
        "verdict_details", "lines", "deals_played", "duration")  # fmt: skip
#: An entry's figures a result may change, written back whole.
FIGURES = ("rating", "rated", "wins", "draws", "losses", "voids")
CHANGE = ("entry_id", "before", "after", "k", "score")


@dataclass(frozen=True)
class Shape:
    seq: bool  # the match takes its season's recording number
    logs: tuple[int, ...]  # the seats whose output is kept
    changes: bool  # a rated result: two rating changes
    entries: int  # the distinct entries whose figures are written (0, 1 or 2)


def params(
    match_id: int,
    done: dict[str, Any],
    replay: bytes,
    logs: dict[int, str],
    changes: list[dict[str, Any]],
    entries: list[dict[str, Any]],
) -> dict[str, Any]:
    """The bound values of `statements` for one result (each write's own names, prefixed)."""
    out: dict[str, Any] = {"w_match": match_id, "w_replay": replay}
    out |= {f"m_{k}": v for k, v in done.items()}
    out |= {f"log{seat}": text for seat, text in logs.items()}
    for i, change in enumerate(changes):
        out |= {f"c{i}_{k}": change[k] for k in CHANGE}
    for j, entry in enumerate(entries):
        out |= {f"e{j}_{k}": entry[k] for k in ("id", *FIGURES)}
    return out


def write(s: Session, shape: Shape, values: dict[str, Any]) -> None:
    """Run the writes of `shape` with `values` (`params`) in the session's transaction."""
    conn = s.connection()
    for statement in statements(conn.dialect.name, shape):
        conn.execute(statement, values)


@cache
def statements(dialect: str, shape: Shape) -> tuple[Executable, ...]:
    """The writes of a result of `shape`: one statement on PostgreSQL, one per write elsewhere."""
    match: BindParameter[int] = bindparam("w_match")
    writes: list[UpdateBase] = [insert(Replay).values(match_id=match, data=bindparam("w_replay"))]
    if shape.logs:
        rows = [{"match_id": match, "seat": seat, "text": bindparam(f"log{seat}")} for seat in shape.logs]
        writes.append(insert(MatchLog).values(rows))
    if shape.changes:
        changes: list[dict[str, Any]] = [
            {"match_id": match} | {k: bindparam(f"c{i}_{k}") for k in CHANGE} for i in (0, 1)
        ]
        writes.append(insert(RatingChange).values(changes))
    for j in range(shape.entries):
        figures = {k: bindparam(f"e{j}_{k}", type_=Entry.__table__.c[k].type) for k in FIGURES}
        writes.append(update(Entry).where(Entry.id == bindparam(f"e{j}_id")).values(figures))
    columns = DONE + (("record_seq",) if shape.seq else ())
    done = {k: bindparam(f"m_{k}", type_=Match.__table__.c[k].type) for k in columns}
    writes.append(update(Match).where(Match.id == match).values(done))
    if dialect != "postgresql":
        return tuple(writes)
    last = writes[-1]
    for i, earlier in enumerate(writes[:-1]):
        last = last.add_cte(earlier.cte(f"write{i}"))
    return (last,)
