"""bundle_blobs: every version's files in the database, once per content hash, so a worker that
shares no folder with the server fetches the bundles it plays (docs/deploy.md "What runs where")

The upgrade also stores the blob of every version already registered, from the version's own stored
copy (`bot_versions.path`, an absolute folder), when that folder exists here and still hashes to the
version's content hash. So run the upgrade (`arena serve`, any `arena` command that opens the store)
on the machine that holds the server's ARENA_HOME. A version whose folder is absent or changed gets
no blob; a worker then fails its matches with BUNDLE_UNAVAILABLE (an infrastructure error, the match
goes back to the queue) until the bot is submitted again, which stores the blob. The backfill reads
each stored bundle once (at most 64 MiB each, usually a few KiB).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07 11:40:00
"""

import logging
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

log = logging.getLogger("arena.store")

blobs = sa.table(
    "bundle_blobs",
    sa.column("content_hash", sa.String),
    sa.column("size", sa.BigInteger),
    sa.column("data", sa.LargeBinary),
    sa.column("created_at", sa.DateTime),
)
versions = sa.table("bot_versions", sa.column("content_hash", sa.String), sa.column("path", sa.Text))


def upgrade() -> None:
    op.create_table(
        "bundle_blobs",
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("content_hash"),
    )
    _backfill(op.get_bind())


def _backfill(conn: sa.Connection) -> None:
    """One blob per content hash of the registered versions whose stored copy is here and intact."""
    from arena.store.bundles import content_hash, pack
    from arena.store.models import utcnow

    done: set[str] = set()
    missing = 0
    for digest, path in conn.execute(sa.select(versions.c.content_hash, versions.c.path)).all():
        if digest in done:
            continue
        folder = Path(path)
        if not folder.is_dir() or content_hash(folder) != digest:
            missing += 1
            continue
        data = pack(folder)
        conn.execute(
            blobs.insert().values(content_hash=digest, size=len(data), data=data, created_at=utcnow())
        )
        done.add(digest)
    if missing:
        log.warning(
            "%d registered version(s) have no intact stored copy here: no blob for them; a worker that "
            "shares no folder with this server cannot play them until they are submitted again",
            missing,
        )


def downgrade() -> None:
    op.drop_table("bundle_blobs")
