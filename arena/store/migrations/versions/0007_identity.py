"""who is who: reserved and case-insensitive names, the organiser's own principal, kinds of suspension

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-07 10:45:00
"""

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Filled in by the change that needs it; empty until then."""


def downgrade() -> None:
    """Filled in by the change that needs it; empty until then."""
