"""length limits on every stored string a caller can set, enforced by the database too

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-07 10:45:00
"""

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Filled in by the change that needs it; empty until then."""


def downgrade() -> None:
    """Filled in by the change that needs it; empty until then."""
