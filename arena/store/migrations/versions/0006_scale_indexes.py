"""indexes for a large ladder's reads (seed, pairs, versions and entries with record order)

Each index serves a query that used to read the whole `matches` table (chosen from EXPLAIN on
PostgreSQL and on SQLite with ANALYZE statistics; tests/store/test_query_plans.py keeps them so):

- `ix_matches_seed`, `ix_matches_season_pair`: the reveal test (`arena.ladder.visibility.sealed_clause`)
  looks up a match's open deck-mates by seed and by season and pair;
- `ix_matches_season_order`: a season's match list, newest first, a keyset page at a time;
- `ix_matches_version0`, `ix_matches_version1`: a bot's matches newest first (its page, the
  `bot` filter, head-to-head);
- `ix_matches_entry0`, `ix_matches_entry1`: an entry's latest recorded matches (the suspension check).

Plain CREATE INDEX (Alembic runs in a transaction, where CREATE INDEX CONCURRENTLY is impossible):
writes to `matches` wait while it runs. Measured on PostgreSQL 15, 2 shared cores, a synthetic
`matches` of 1,000,000 rows (INSERT ... SELECT generate_series, the indexed columns only): 4.5 s for
all seven (0.3 to 0.9 s each). A real store's rows are wider (rules, lines, verdict details), so
reading the table takes longer: plan for a few times that, and run it while no season plays.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-07 10:45:00
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

INDEXES = {
    "ix_matches_seed": ["seed"],
    "ix_matches_season_pair": ["season_id", "pair"],
    "ix_matches_season_order": ["season_id", "id"],
    "ix_matches_version0": ["version0_id", "id"],
    "ix_matches_version1": ["version1_id", "id"],
    "ix_matches_entry0": ["entry0_id", "record_seq"],
    "ix_matches_entry1": ["entry1_id", "record_seq"],
    # the standings' tally (arena.ladder.tally): a season's results recorded since its last read
    "ix_matches_season_seq": ["season_id", "record_seq"],
}


def upgrade() -> None:
    for name, columns in INDEXES.items():
        op.create_index(name, "matches", columns, unique=False)


def downgrade() -> None:
    for name in reversed(INDEXES):
        op.drop_index(name, table_name="matches")
