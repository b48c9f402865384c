"""a pairing's repeat cap from two indexes alone (issue #33)

`ix_matches_entry0` and `ix_matches_entry1` gain, after (entry, record_seq), the other seat's
entry: the matchmaking's repeat cap counts the first's matches with each other entry
(`arena.ladder.pairing_pick`) by index-only scans of these, where it read a heap page per match of
the entry (about 1,000 at L). The record order, which an entry's recent matches walk, is
unchanged (the new column comes last).

Index-only scans need the table's visibility map: PostgreSQL's autovacuum keeps it (on by
default). Plain CREATE INDEX (Alembic runs in a transaction): writes to `matches` wait while it
runs (a few seconds at L; see docs/deploy.md "Sizing").

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-07 21:05:00
"""

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    for seat in (0, 1):
        op.drop_index(f"ix_matches_entry{seat}", table_name="matches")
        op.create_index(
            f"ix_matches_entry{seat}", "matches", [f"entry{seat}_id", "record_seq", f"entry{1 - seat}_id"]
        )


def downgrade() -> None:
    for seat in (0, 1):
        op.drop_index(f"ix_matches_entry{seat}", table_name="matches")
        op.create_index(f"ix_matches_entry{seat}", "matches", [f"entry{seat}_id", "record_seq"])
