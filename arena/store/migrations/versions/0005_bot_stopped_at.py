"""when a bot was last retired or suspended (the jobs name its bundles for a while, so workers stop
its warm zygotes, instead of naming every bot ever retired)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-06 09:30:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.add_column(sa.Column("stopped_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bots", schema=None) as batch_op:
        batch_op.drop_column("stopped_at")
