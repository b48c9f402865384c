"""The arena's persistent store: SQLAlchemy 2 models behind one repository API (`Store`).

SQLite `arena.db` (WAL) by default, PostgreSQL when ARENA_DATABASE_URL names it; Alembic migrations
ship inside the package. Imports nothing else of the arena.
"""

from arena.store.jobs import MatchJob, MatchResult
from arena.store.repo import Store, StoreError, Submitted

__all__ = ["MatchJob", "MatchResult", "Store", "StoreError", "Submitted"]
