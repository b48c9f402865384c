"""matches: start time, deck commitment and its salt

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 12:30:00

A match's seed and salt stay private until it (and its duplicate twin) are over; the commitment
(SHA-256 over seed, match id and salt, docs/shuffle.md) is public from the moment it is queued.
`started_at` lets anyone check that two matches dealing the same decks never overlapped.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("started_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("salt", sa.String(length=32), nullable=False, server_default=""))
        batch_op.add_column(sa.Column("commitment", sa.String(length=64), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("commitment")
        batch_op.drop_column("salt")
        batch_op.drop_column("started_at")
