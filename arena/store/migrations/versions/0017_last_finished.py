"""the latest finished match from an index (issue #35: the stuck-queue alert)

- `ix_matches_finished` on matches (finished_at): `/healthz` and `/metrics` ask when the last match
  was recorded (`arena.store.health`), every few seconds while scraped; max(finished_at) is then one
  index probe instead of a scan of every match.

Plain CREATE INDEX (Alembic runs in a transaction): writes to `matches` wait while it runs.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07 20:30:00
"""

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_matches_finished", "matches", ["finished_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_matches_finished", table_name="matches")
