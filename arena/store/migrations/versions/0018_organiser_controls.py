"""the organiser's controls (issue #35): pause a season, void a match with a reason, suspend an
owner, drain a worker, and the log of every such action

- `seasons.paused`: a paused season schedules and starts no match; those running finish.
- `seasons.revision`: bumped by every correction of a season's recorded results (a void, a
  recompute), so that the standings caches of every process (keyed by it) start afresh.
- `matches.void_reason`: the organiser's stated reason for voiding a played match (public); NULL
  for every match the organiser did not void.
- `owners.suspended_at`, `owners.suspension_reason`: an owner the organiser suspended (their bots
  are suspended with it; they may read but not submit or challenge).
- `worker_drains`: the workers told to finish their current matches and take no new one, by name
  (a host, `host:pid`, or a whole lease owner name).
- `admin_actions`: who did what, when, to what: the organiser's log (admin only).
- `matches.request_id`: the request id of the call that queued a challenge, which the worker's log
  lines about the match carry (docs/deploy.md "Logs").

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-07 20:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("seasons", schema=None) as batch_op:
        batch_op.add_column(sa.Column("paused", sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("revision", sa.Integer(), nullable=False, server_default="0"))
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.add_column(sa.Column("void_reason", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("request_id", sa.String(64), nullable=True))
    with op.batch_alter_table("owners", schema=None) as batch_op:
        batch_op.add_column(sa.Column("suspended_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("suspension_reason", sa.Text(), nullable=True))
    op.create_table(
        "worker_drains",
        sa.Column("name", sa.String(128), primary_key=True),
        sa.Column("reason", sa.Text(), nullable=False, server_default=""),
        sa.Column("requested_at", sa.DateTime(), nullable=False),
    )
    op.create_table(
        "admin_actions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("target", sa.String(200), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False, server_default=""),
    )


def downgrade() -> None:
    op.drop_table("admin_actions")
    op.drop_table("worker_drains")
    with op.batch_alter_table("owners", schema=None) as batch_op:
        batch_op.drop_column("suspension_reason")
        batch_op.drop_column("suspended_at")
    with op.batch_alter_table("matches", schema=None) as batch_op:
        batch_op.drop_column("request_id")
        batch_op.drop_column("void_reason")
    with op.batch_alter_table("seasons", schema=None) as batch_op:
        batch_op.drop_column("revision")
        batch_op.drop_column("paused")
