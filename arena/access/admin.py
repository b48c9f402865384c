"""The organiser's admin token: where it comes from and how a presented token is checked.

The token is read from a file (`--admin-token-file`) or from `ARENA_ADMIN_TOKEN`. Checks compare
SHA-256 digests with `hmac.compare_digest`, so neither the content nor the length of the real token
shows in the time a wrong guess takes.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field
from pathlib import Path

ENV = "ARENA_ADMIN_TOKEN"
MIN_LENGTH = 16


class AdminTokenError(ValueError):
    """An admin token that cannot be used; the message names the source and the fix."""


@dataclass(frozen=True)
class AdminToken:
    digest: bytes = field(repr=False)
    source: str = ""  # "ARENA_ADMIN_TOKEN" or the file's path, for messages

    @classmethod
    def of(cls, value: str, source: str = "") -> AdminToken:
        value = value.strip()
        if len(value) < MIN_LENGTH:
            raise AdminTokenError(
                f"the admin token from {source or 'the caller'} is shorter than {MIN_LENGTH} "
                "characters; make one with `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`"
            )
        return cls(hashlib.sha256(value.encode()).digest(), source)

    @classmethod
    def load(cls, path: str | Path | None = None) -> AdminToken | None:
        """The token in `path` if given, else in $ARENA_ADMIN_TOKEN, else None (no admin)."""
        if path:
            try:
                text = Path(path).read_text()
            except OSError as exc:
                raise AdminTokenError(f"cannot read the admin token file {path}: {exc.strerror}") from None
            return cls.of(text, str(path))
        env = os.environ.get(ENV)
        if env:
            return cls.of(env, ENV)
        return None

    def check(self, presented: str | None) -> bool:
        """True when `presented` is the admin token; constant-time."""
        if not presented:
            return False
        return hmac.compare_digest(self.digest, hashlib.sha256(presented.strip().encode()).digest())


def bearer(value: str | None) -> str | None:
    """The token of an `authorization: Bearer TOKEN` header or metadata value, else None."""
    if value and value[:7].lower() == "bearer ":
        return value[7:].strip() or None
    return None
