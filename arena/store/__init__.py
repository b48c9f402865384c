"""The arena's persistent store: SQLAlchemy 2 models behind one repository API (`Store`).

SQLite `arena.db` (WAL) by default, PostgreSQL when ARENA_DATABASE_URL names it; Alembic migrations
ship inside the package. Imports nothing else of the arena. Names load lazily, so that worker
processes which only need the plain job records do not import SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.store.jobs import MatchJob, MatchResult

if TYPE_CHECKING:
    from arena.store.repo import Store, StoreError, StoreUnavailable, Submitted

__all__ = ["MatchJob", "MatchResult", "Store", "StoreError", "StoreUnavailable", "Submitted"]


def __getattr__(name: str) -> Any:
    if name in ("Store", "StoreError", "StoreUnavailable", "Submitted"):
        from arena.store import repo

        return getattr(repo, name)
    raise AttributeError(f"module 'arena.store' has no attribute {name!r}")
