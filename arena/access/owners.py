"""Owners and their API tokens: create, list, revoke, rotate, and find the owner of a presented token.

A token is `elf_` followed by 43 URL-safe characters (256 random bits): the prefix lets secret
scanners spot a leaked one. Only its SHA-256 is stored, so a copy of the database hands out no
token; the first characters are kept to name a token in messages ("elf_Xy3q…").
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.access.display import SHOWN
from arena.store import Store, StoreError
from arena.store.models import Bot, Owner, utcnow
from arena.store.repo import BadName, check_name

PREFIX = "elf_"


class OwnerError(StoreError):
    """An owner command that cannot be done; the message says why and what to do."""


@dataclass(frozen=True)
class OwnerInfo:
    """An owner as listings show it (never the token)."""

    name: str
    token_prefix: str
    created_at: datetime
    rotated_at: datetime | None
    revoked: bool
    bots: int

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "token_prefix": self.token_prefix,
            "created_at": self.created_at.isoformat(timespec="seconds") + "Z",
            "rotated_at": self.rotated_at.isoformat(timespec="seconds") + "Z" if self.rotated_at else None,
            "revoked": self.revoked,
            "bots": self.bots,
        }


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.strip().encode()).hexdigest()


def _owner(s: Session, name: str) -> Owner:
    owner = s.scalar(select(Owner).where(Owner.name == name))
    if owner is None:
        raise OwnerError(
            f"no owner named {name!r}; `arena owners list` shows them, `arena owners add NAME` makes one"
        )
    return owner


def add_owner(store: Store, name: str) -> str:
    """Create an owner and return its token (shown once; only its hash is kept)."""
    try:
        check_name(name, "owner name")
    except BadName as exc:
        raise OwnerError(str(exc)) from None
    token = new_token()
    with store.tx() as s:
        if s.scalar(select(Owner).where(Owner.name == name)) is not None:
            raise OwnerError(f"owner {name!r} exists; `arena owners rotate {name}` gives it a new token")
        s.add(Owner(name=name, token_hash=token_hash(token), token_prefix=token[:SHOWN]))
    return token


def rotate_owner(store: Store, name: str) -> str:
    """A new token for the owner (the old one stops working at once); also lifts a revocation."""
    token = new_token()
    with store.tx() as s:
        owner = _owner(s, name)
        owner.token_hash, owner.token_prefix = token_hash(token), token[:SHOWN]
        owner.rotated_at, owner.revoked_at = utcnow(), None
    return token


def revoke_owner(store: Store, name: str) -> None:
    """The owner's token stops working; its bots stay (rotate to hand out a new token)."""
    with store.tx() as s:
        owner = _owner(s, name)
        if owner.revoked_at is None:
            owner.revoked_at = utcnow()
            # a revoked token must never match again, even if the row is later rotated back
            owner.token_hash = "revoked:" + secrets.token_hex(24)


def list_owners(store: Store) -> list[OwnerInfo]:
    with store.read() as s:
        counts: dict[str, int] = {}
        for (owner,) in s.execute(select(Bot.owner)):
            counts[owner] = counts.get(owner, 0) + 1
        return [
            OwnerInfo(
                o.name,
                o.token_prefix,
                o.created_at,
                o.rotated_at,
                o.revoked_at is not None,
                counts.get(o.name, 0),
            )
            for o in s.scalars(select(Owner).order_by(Owner.name))
        ]


def owner_of_token(store: Store, token: str | None) -> str | None:
    """The name of the live owner whose token this is, else None."""
    if not token or not token.startswith(PREFIX):
        return None
    with store.read() as s:
        owner = s.scalar(
            select(Owner).where(Owner.token_hash == token_hash(token), Owner.revoked_at.is_(None))
        )
        return owner.name if owner is not None else None
