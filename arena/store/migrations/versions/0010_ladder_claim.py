"""the ladder's claim and pairing without reading history (issue #30)

- `ix_matches_claim` on matches (status, kind, season_id, id): the claim of the oldest queued match
  of a season and kind (`arena.store.queue.claim`) reads the queued rows of that season and kind in
  id order, so it stops at the first it may take; before, the planner walked the primary key from
  the oldest match of the store, through every finished one, or sorted all queued matches.
- `entries.pairing_elo`: the season fit's rating the matchmaking pairs an established entry on,
  written at each pairing refit (`arena.ladder.pairing_fit`); NULL: the entry pairs on its live Elo.
- `seasons.pairing_fitted`: `seasons.recorded` at that refit (NULL: never), so a process that starts
  knows how old the stored pairing ratings are instead of refitting the whole season first.

Plain CREATE INDEX (Alembic runs in a transaction): writes to `matches` wait while it runs. Measured
on copies of the scale bench's stores on the shared 2-core VM: 7.4 s and 11.4 s at L on PostgreSQL
(1,000,000 matches, load 9-13; the index is 39 MB), 1.5 s and 2.1 s at M on SQLite (100,000
matches). The two columns are nullable without a default, so adding them rewrites no row.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-07 13:45:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_claim", "matches", ["status", "kind", "season_id", "id"], unique=False)
    op.add_column("entries", sa.Column("pairing_elo", sa.Float(), nullable=True))
    op.add_column("seasons", sa.Column("pairing_fitted", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("seasons") as batch:
        batch.drop_column("pairing_fitted")
    with op.batch_alter_table("entries") as batch:
        batch.drop_column("pairing_elo")
    op.drop_index("ix_matches_claim", table_name="matches")
