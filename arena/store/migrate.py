"""Alembic migrations shipped inside the package, so an installed arena can upgrade its own database."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text

from arena.store.db import StoreUnavailable, shown

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def alembic_config(engine: Engine | None = None) -> Config:
    """An Alembic config pointing at the packaged scripts (no alembic.ini needed)."""
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    if engine is not None:
        cfg.set_main_option(
            "sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%")
        )
    return cfg


# Held for the migrating transaction on PostgreSQL, so that processes starting together on a new
# database (the web server and the workers) take turns: the first creates the tables, the others
# then find them. SQLite's writers already queue (make_engine begins with BEGIN IMMEDIATE).
MIGRATION_LOCK = 0x656C6665726E  # "elfern"


UPGRADE_FIX = "upgrade the arena package (pip install -U elfern-arena) to one that knows it"


class StoreTooNew(StoreUnavailable):
    """The store (or a backup) was written by a newer arena: its schema revision is not one this
    code's migrations know. Opening it could corrupt it, so every process refuses, in one line."""


@cache
def known_revisions() -> tuple[str, ...]:
    """This code's schema revisions, oldest first (the packaged migrations; read once a process)."""
    script = ScriptDirectory.from_config(alembic_config())
    return tuple(rev.revision for rev in reversed(list(script.walk_revisions())))


def head_revision() -> str:
    """The newest schema revision this code knows."""
    return known_revisions()[-1]


def stored_revision(conn: Connection) -> str | None:
    """The schema revision recorded in the database, None for a database never migrated."""
    if not inspect(conn).has_table("alembic_version"):
        return None
    return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()


def check_known(revision: str | None, what: str) -> None:
    """StoreTooNew when `revision` (of `what`: a database URL, a backup folder) is not one of ours."""
    if revision is not None and revision not in known_revisions():
        raise StoreTooNew(
            f"{what} has schema revision {revision}, newer than this arena knows (up to "
            f"{head_revision()}); {UPGRADE_FIX}"
        )


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision` (idempotent; safe from several processes at once).
    StoreTooNew, before anything is changed, for a database written by a newer arena."""
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        check_known(stored_revision(conn), f"the database {shown(engine.url)!r}")
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
