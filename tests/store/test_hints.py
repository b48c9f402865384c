"""`arena.store.hints`: SQLite's planner is told how often a condition holds; the rows never change.

The plans themselves are checked at size in tests/store/test_query_plans.py; here the SQL each
database is sent, and that both still answer the same rows as the bare condition.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from arena.store.hints import likely, unlikely
from arena.store.models import Match
from tests.store.scale_support import fill


def test_sqlite_is_sent_likelihood_as_a_where_term_of_its_own() -> None:
    q = select(Match.id).where(likely(Match.status == "done"), unlikely(Match.kind == "final"))
    text = str(q.compile(dialect=sqlite.dialect()))
    assert "likelihood(matches.status = ?, 0.99) AND likelihood(matches.kind = ?, 0.001)" in text
    assert "= 1" not in text  # `likelihood(...) = 1` would hide the condition from every index


def test_postgresql_is_sent_the_bare_condition() -> None:
    q = select(Match.id).where(likely(Match.status == "done"))
    text = str(q.compile(dialect=postgresql.dialect()))
    assert "likelihood" not in text
    assert "matches.status = %(status_1)s" in text


def test_a_hint_keeps_the_rows(store) -> None:
    ladder = fill(store, matches=40, bots=4, open_pairs=2)
    with store.read() as s:
        for status, hinted in (("done", likely), ("queued", unlikely)):
            bare = s.scalars(select(Match.id).where(Match.status == status).order_by(Match.id)).all()
            told = s.scalars(select(Match.id).where(hinted(Match.status == status)).order_by(Match.id)).all()
            assert told == bare and bare
    assert ladder.sealed
