"""Alembic migrations shipped inside the package, so an installed arena can upgrade its own database."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, text

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


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to `revision` (idempotent; safe from several processes at once)."""
    cfg = alembic_config(engine)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
