"""registry_revs: a count of the registry's changes that decide a season's entries, kept by
triggers, so a pairing need not read the registry to know its entries are in sync (issue #30).

- `registry_revs`, one row (id 1, rev 0): bumped in the changing transaction by triggers on
  bots (insert, delete, update of retired or suspended), bot_versions (insert, delete, update of
  bot_id, number, build_ok or ladder) and entries (insert, delete, update of season_id, version_id
  or active): everything `arena.ladder.season_entries._out_of_sync` reads, so whatever code or tool
  writes these rows, the count moves. The row lock serialises such changes (rare, human-scale); the
  count is exact because a bump commits with the change it counts.
- `seasons.synced_rev`: the count when the matchmaking last found the season in sync (NULL: never).

PostgreSQL's triggers fire once per statement (a bulk COPY bumps once); SQLite's once per row. A new
table and a nullable column: the upgrade rewrites no row and takes milliseconds on any store.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-07 17:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

# table -> the columns whose update changes what the entries' sync decides
WATCHED = {
    "bots": ("retired", "suspended"),
    "bot_versions": ("bot_id", "number", "build_ok", "ladder"),
    "entries": ("season_id", "version_id", "active"),
}
BUMP = "UPDATE registry_revs SET rev = rev + 1 WHERE id = 1"


def upgrade() -> None:
    op.create_table(
        "registry_revs",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("rev", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.execute("INSERT INTO registry_revs (id, rev) VALUES (1, 0)")
    op.add_column("seasons", sa.Column("synced_rev", sa.Integer(), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION bump_registry_rev() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$ BEGIN {BUMP}; RETURN NULL; END $$"
        )
        for table, columns in WATCHED.items():
            op.execute(
                f"CREATE TRIGGER {table}_registry_rev AFTER INSERT OR DELETE OR UPDATE OF "
                f"{', '.join(columns)} ON {table} FOR EACH STATEMENT EXECUTE FUNCTION bump_registry_rev()"
            )
        return
    for table, columns in WATCHED.items():
        for event in ("INSERT", "DELETE", f"UPDATE OF {', '.join(columns)}"):
            name = f"{table}_registry_rev_{event.split()[0].lower()}"
            op.execute(f"CREATE TRIGGER {name} AFTER {event} ON {table} BEGIN {BUMP}; END")


def downgrade() -> None:
    for table in WATCHED:
        if op.get_bind().dialect.name == "postgresql":
            op.execute(f"DROP TRIGGER {table}_registry_rev ON {table}")
        else:
            for event in ("insert", "delete", "update"):
                op.execute(f"DROP TRIGGER {table}_registry_rev_{event}")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION bump_registry_rev()")
    with op.batch_alter_table("seasons") as batch:
        batch.drop_column("synced_rev")
    op.drop_table("registry_revs")
