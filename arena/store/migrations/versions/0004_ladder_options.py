"""season options (anchors, pairing of one owner's bots); an entry's starting live rating; versions
registered by `arena compare` stay out of seasons

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 15:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seasons", schema=None) as batch_op:
        batch_op.add_column(sa.Column("options", sa.JSON(), nullable=True))
    with op.batch_alter_table("entries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("start_rating", sa.Float(), nullable=False, server_default="1500.0"))
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("ladder", sa.Boolean(), nullable=False, server_default=sa.true()))


def downgrade() -> None:
    with op.batch_alter_table("bot_versions", schema=None) as batch_op:
        batch_op.drop_column("ladder")
    with op.batch_alter_table("entries", schema=None) as batch_op:
        batch_op.drop_column("start_rating")
    with op.batch_alter_table("seasons", schema=None) as batch_op:
        batch_op.drop_column("options")
