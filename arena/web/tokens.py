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

    def __init__(self, secret: bytes | None = None, home: str | Path | None = None) -> None:
        self._secret = secret
        self._home = home

    @classmethod
    def for_home(cls, home: str | Path | None = None) -> OwnerTokens:
        """Tokens under ARENA_WEB_SECRET, else under a secret kept in the arena home (made on first use)."""
        env = os.environ.get("ARENA_WEB_SECRET")
        return cls(env.encode() if env else None, home)

    @property
    def secret(self) -> bytes:
        if self._secret is None:
            self._secret = _home_secret(self._home)
        if not self._secret:
            raise ValueError(
                "the owner-token secret is empty; set ARENA_WEB_SECRET or delete the web-secret file"
            )
        return self._secret

    def token(self, owner: str) -> str:
        """The owner's token (stable for as long as the secret is)."""
        return hmac.new(self.secret, b"owner:" + owner.encode(), hashlib.sha256).hexdigest()[:32]

    def check(self, owner: str, token: str | None) -> bool:
        """True when `token` is the owner's; constant-time."""
        return bool(token and hmac.compare_digest(self.token(owner).encode(), token.strip().encode()))


def _home_secret(home: str | Path | None) -> bytes:
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
    return path.read_text().strip().encode()
