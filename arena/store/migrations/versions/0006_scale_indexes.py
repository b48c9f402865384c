"""indexes for a large ladder's reads (seed, pairs, versions and entries with record order)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-07 10:45:00
"""

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Filled in by the change that needs it; empty until then."""


def downgrade() -> None:
    """Filled in by the change that needs it; empty until then."""
