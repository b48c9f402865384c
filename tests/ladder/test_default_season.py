"""The default season (`arena.ladder.queries.default_season`, which the web, the API and the CLI all
ask): the newest running season, else the newest closing one, else the newest; one statement."""

from __future__ import annotations

from sqlalchemy import event

from arena.ladder.queries import default_season
from arena.store import Store
from arena.store.models import Season


def _default(store: Store) -> tuple[str | None, int]:
    seen: list[str] = []

    def note(_conn, _cursor, statement, _params, _context, _many) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        with store.read() as s:
            found = default_season(s)
            return (found.name if found is not None else None), len(seen)
    finally:
        event.remove(store.engine, "before_cursor_execute", note)


def _add(store: Store, name: str, status: str) -> None:
    with store.tx() as s:
        s.add(Season(name=name, seed=1, status=status))


def test_the_newest_running_then_closing_then_any_season(store: Store) -> None:
    assert _default(store) == (None, 1)
    _add(store, "old-frozen", "frozen")
    assert _default(store) == ("old-frozen", 1)
    _add(store, "closing-1", "closing")
    _add(store, "running-1", "running")
    _add(store, "closing-2", "closing")
    _add(store, "running-2", "running")
    _add(store, "new-frozen", "frozen")
    assert _default(store) == ("running-2", 1)  # the newest running, though a frozen one is newer
    with store.tx() as s:
        for season in s.query(Season).filter(Season.status == "running"):
            season.status = "frozen"
    assert _default(store) == ("closing-2", 1)
    with store.tx() as s:
        for season in s.query(Season).filter(Season.status == "closing"):
            season.status = "frozen"
    assert _default(store) == ("new-frozen", 1)
