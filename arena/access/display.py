"""How a token may appear in a message, a listing or a log: its first characters, never all of it.

Kept apart from owners.py (which needs the store) so that the CLI's remote client can use it
without loading SQLAlchemy.
"""

from __future__ import annotations

SHOWN = 8  # characters of a token shown in messages and listings


def shown(token: str | None) -> str:
    """The first characters of a token, for messages (never the whole secret)."""
    if not token:
        return "(none)"
    return token.strip()[:SHOWN] + "…"
