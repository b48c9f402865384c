"""the match lists' verdict filter without reading history (issue #30)

- `ix_matches_unusual` on matches (id), partial: the matches that are void or whose verdicts are not
  `["OK", "OK"]` (a fault, a crash, an open match's empty list): about 1% of a ladder's history. A
  list filtered by a verdict other than OK, or by VOID, repeats the index's condition
  (`arena.store.models.unusual`) and walks these rows newest first; before, PostgreSQL walked the
  primary key back through every match (2.5-9 s a page at L, its capped count a full scan).

Plain CREATE INDEX (Alembic runs in a transaction): writes to `matches` wait while it runs (one read
of the table; see docs/deploy.md "Sizing" for its time at L).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07 17:20:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

# the condition as `arena.store.models.unusual` renders it on each database
PG = 'void IS true OR CAST(verdicts AS VARCHAR) != \'["OK", "OK"]\''
SQLITE = 'void IS 1 OR CAST(verdicts AS VARCHAR) != \'["OK", "OK"]\''


def upgrade() -> None:
    op.create_index(
        "ix_matches_unusual",
        "matches",
        ["id"],
        unique=False,
        postgresql_where=sa.text(PG),
        sqlite_where=sa.text(SQLITE),
    )


def downgrade() -> None:
    op.drop_index("ix_matches_unusual", table_name="matches")
