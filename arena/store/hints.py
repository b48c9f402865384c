"""How often a condition holds, told to SQLite's planner: `likely(...)` and `unlikely(...)`.

SQLite's statistics (`sqlite_stat1`, gathered by `PRAGMA optimize` in `arena.store.db`) hold one
number per index column: the average rows per value. They cannot say that `status = 'done'` fits
nearly every match while `status = 'queued'` fits a handful, and with `analysis_limit` they cap
every count at the rows examined, so the status index looks selective for `done` too. The planner
then reads every finished match through it and sorts them to show fifty (issue #30: the match list
took 0.2-1 s at 100,000 matches). SQLite's `likelihood(X, P)` gives the planner the fraction of rows
a condition keeps, whatever the statistics say; it changes the plan only, never the answer.
PostgreSQL keeps real histograms, so there the condition is sent unchanged.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, literal_column
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement
from sqlalchemy.types import NullType

LIKELY = 0.99  # a condition nearly every row meets (a finished match, in a long history)
UNLIKELY = 0.001  # a condition few rows meet (an open match)


class likelihood(FunctionElement[Any]):  # (named as the SQL function it renders)
    """`likelihood(condition, probability)` on SQLite; the bare condition elsewhere."""

    # not Boolean: SQLAlchemy would then write `likelihood(...) = 1` for SQLite, a term the planner
    # cannot match to an index at all
    type = NullType()
    name = "likelihood"
    inherit_cache = True


@compiles(likelihood)
def _bare(element: likelihood, compiler: SQLCompiler, **kw: Any) -> str:
    condition = next(iter(element.clauses))
    return compiler.process(condition, **kw)


@compiles(likelihood, "sqlite")
def _hinted(element: likelihood, compiler: SQLCompiler, **kw: Any) -> str:
    condition, probability = list(element.clauses)
    return f"likelihood({compiler.process(condition, **kw)}, {compiler.process(probability, **kw)})"


def _with(condition: ColumnElement[bool], probability: float) -> ColumnElement[bool]:
    # the probability must be a literal: SQLite refuses a bound parameter there
    return likelihood(condition, literal_column(repr(float(probability))))


def likely(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    """`condition`, which nearly every row meets (e.g. a finished match)."""
    return _with(condition, LIKELY)


def unlikely(condition: ColumnElement[bool]) -> ColumnElement[bool]:
    """`condition`, which few rows meet (e.g. an open match)."""
    return _with(condition, UNLIKELY)
