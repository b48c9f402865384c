"""Owner tokens: who may read a bot's logs on the web.

The store knows each bot's owner by name. A token proves ownership without a user table: it is an
HMAC of the owner's name under the server's secret (`ARENA_WEB_SECRET`, or a random secret kept in
`$ARENA_HOME/web-secret`, created with mode 0600 on first use). `arena web --owner-token NAME`
prints an owner's token for the organiser to hand out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from arena.store.db import arena_home

SECRET_FILE = "web-secret"


class OwnerTokens:
    """Issues and checks owner tokens under one secret."""

    def __init__(self, secret: bytes) -> None:
        if not secret:
            raise ValueError("the owner-token secret must not be empty")
        self._secret = secret

    @classmethod
    def for_home(cls, home: str | Path | None = None) -> OwnerTokens:
        """The secret from ARENA_WEB_SECRET, else from the arena home (created once)."""
        env = os.environ.get("ARENA_WEB_SECRET")
        if env:
            return cls(env.encode())
        path = arena_home(home) / SECRET_FILE
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:  # another process made it first: use theirs
                pass
            else:
                with os.fdopen(fd, "w") as fh:
                    fh.write(secrets.token_hex(32))
        return cls(path.read_text().strip().encode())

    def token(self, owner: str) -> str:
        """The owner's token (stable for as long as the secret is)."""
        return hmac.new(self._secret, b"owner:" + owner.encode(), hashlib.sha256).hexdigest()[:32]

    def check(self, owner: str, token: str | None) -> bool:
        """True when `token` is the owner's; constant-time."""
        return bool(token) and hmac.compare_digest(self.token(owner), token.strip())
