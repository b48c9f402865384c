"""season_tallies: each season's standings tally as last saved (results per pair of entries, each
entry's last rating points, the fit's ratings, as of `recorded` results), so a new process reads only
the results recorded since instead of the whole season (`arena.ladder.tally_store`, issue #30).

No foreign key to `seasons`: saving this cache must never wait on a season row that the runner
holds FOR UPDATE while it pairs (a key check would), and seasons are never deleted.

A new, empty table: the upgrade reads no existing row and takes milliseconds on any store; the first
standings read of each season fills it.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-07 13:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "season_tallies",
        sa.Column("season_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("recorded", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.Column("saved_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("season_id"),
    )


def downgrade() -> None:
    op.drop_table("season_tallies")
