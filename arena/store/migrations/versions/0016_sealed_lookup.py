"""a bot's sealed matches from two indexes alone (issue #30)

- `ix_matches_version0` and `ix_matches_version1` gain, after (version, id), the list filters'
  status and kind and the reveal test's seed, season_id and pair. A bot's page (web, JSON, gRPC
  `GetBot`) finds its finished matches that are still sealed
  (`arena.ladder.visibility.sealed_done`), and a bot-filtered list counts its matches up to the
  cap, by index-only scans of these; before, each read a heap page per match of the bot (about
  1,000 at L). The id order, which the bot's lists walk, is unchanged (id is unique).
- `ix_matches_open_decks` on matches (seed, season_id, pair), partial: the queued and running
  matches only (a few hundred at L), the other side of the same test, read from the index alone
  where it read each open match's row through `ix_matches_claim`.

Index-only scans need the table's visibility map: PostgreSQL's autovacuum keeps it (on by
default). Plain CREATE INDEX (Alembic runs in a transaction): writes to `matches` wait while it
runs (a few seconds at L; see docs/deploy.md "Sizing").

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07 18:10:00
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

OPEN = sa.text("status IN ('queued', 'running')")
DECKS = ["status", "kind", "seed", "season_id", "pair"]


def upgrade() -> None:
    for seat in (0, 1):
        op.drop_index(f"ix_matches_version{seat}", table_name="matches")
        op.create_index(f"ix_matches_version{seat}", "matches", [f"version{seat}_id", "id", *DECKS])
    op.create_index(
        "ix_matches_open_decks",
        "matches",
        ["seed", "season_id", "pair"],
        unique=False,
        postgresql_where=OPEN,
        sqlite_where=OPEN,
    )


def downgrade() -> None:
    op.drop_index("ix_matches_open_decks", table_name="matches")
    for seat in (0, 1):
        op.drop_index(f"ix_matches_version{seat}", table_name="matches")
        op.create_index(f"ix_matches_version{seat}", "matches", [f"version{seat}_id", "id"])
