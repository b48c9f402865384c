"""ix_matches_held: the open matches of each entry, for the pairing (issue #30).

A partial index on matches (season_id, entry0_id, entry1_id, status) of the queued, running and
failed matches only: a pairing counts each entry's held matches (`arena.ladder.pairing_pick`) from
it alone (an index-only scan of a few hundred rows at L), where it read them through
`ix_matches_claim` and the table, and PostgreSQL's planner, costing that read high, started two
parallel workers for it on every pairing (30-70 ms of their start-up on the loaded 2-core VM).

Plain CREATE INDEX (Alembic runs in a transaction): writes to `matches` wait while it runs; it
reads the table once and keeps a few hundred rows. Measured on a copy of the scale bench's L store
(1,000,000 matches, PostgreSQL): see docs/deploy.md "Sizing".

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-07 17:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

HELD = sa.text("status IN ('queued', 'running', 'failed')")


def upgrade() -> None:
    op.create_index(
        "ix_matches_held",
        "matches",
        ["season_id", "entry0_id", "entry1_id", "status"],
        unique=False,
        postgresql_where=HELD,
        sqlite_where=HELD,
    )


def downgrade() -> None:
    op.drop_index("ix_matches_held", table_name="matches")
