"""matches: two indexes no read needs, dropped (issue #30)

- `ix_matches_season_id` (season_id), made by the column's `index=True`: every read that filters
  a season also finds it first in `ix_matches_season_pair`, `ix_matches_season_order` and
  `ix_matches_season_seq`. A whole run of `arena bench scale --size L` on PostgreSQL (every page,
  JSON route, gRPC read, CLI listing and ladder step) never read it (pg_stat_user_indexes).
- `ix_matches_queue` (status, lease_expires): the same run read it 5 times in 3 million index
  reads, for the open matches (the running deck-mates, the open counts, the expired leases), which
  `ix_matches_claim` (status, kind, season_id, id) finds as well, its first column being status,
  or the partial `ix_matches_held` and `ix_matches_open_decks`. tests/store/test_query_plans.py
  checks the hot reads' plans without both.

Each index costs every write that moves a match (queued, running, done: none of them can be a HOT
update, status being indexed) one more index entry. Dropping takes milliseconds at any size.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07 20:45:00
"""

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_matches_season_id", table_name="matches")
    op.drop_index("ix_matches_queue", table_name="matches")


def downgrade() -> None:
    op.create_index("ix_matches_queue", "matches", ["status", "lease_expires"], unique=False)
    op.create_index("ix_matches_season_id", "matches", ["season_id"], unique=False)
