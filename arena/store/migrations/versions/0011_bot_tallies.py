"""bot_tallies: each bot's finished matches per opponent bot and own verdict, with its wins, draws
and losses, kept by the recorder so that a bot's page never reads its whole history
(`arena.store.tallies`)

The upgrade counts the matches already finished (`tallies.recount`: one grouped read of `matches`
and batched inserts). Measured on PostgreSQL 15 on the shared 2-core VM, on a copy of the scale
bench's L store (1,000,000 matches, 2,000 bots): see docs/deploy.md "Sizing".

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07 14:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from arena.store.tallies import recount

    op.create_table(
        "bot_tallies",
        sa.Column("bot_id", sa.Integer(), sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("opponent_id", sa.Integer(), sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("verdict", sa.String(length=32), nullable=False),
        sa.Column("matches", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("bot_id", "opponent_id", "verdict"),
    )
    recount(op.get_bind())


def downgrade() -> None:
    op.drop_table("bot_tallies")
