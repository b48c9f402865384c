"""Alembic environment: runs on the connection `arena.store.migrate` hands over (or on the URL)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from arena.store.models import Base

config = context.config
target_metadata = Base.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        url = config.get_main_option("sqlalchemy.url")
        if url is None:
            raise RuntimeError("alembic: no connection handed over and no sqlalchemy.url configured")
        engine = create_engine(url)
        with engine.connect() as conn:
            context.configure(connection=conn, target_metadata=target_metadata, render_as_batch=True)
            with context.begin_transaction():
                context.run_migrations()
        return
    context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run()
