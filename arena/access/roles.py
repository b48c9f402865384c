"""Roles: who is asking. Every surface (web pages, JSON API, gRPC) turns a presented token into a
`Principal` here, so that the rules of docs/security.md are written once.

- spectator: no token; sees what the rules make public after the fact.
- owner: an owner's API token; also sees and manages its own bots, logs and private records.
- admin: the organiser's admin token; sees and manages everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arena.access.admin import AdminToken
from arena.access.display import shown
from arena.access.owners import owner_of_token
from arena.store import Store

Role = Literal["spectator", "owner", "admin"]


class Unauthenticated(Exception):
    """A token was presented but is not valid (wrong, revoked, or malformed)."""

    def __init__(self, token: str) -> None:
        super().__init__(
            f"the token {shown(token)} is not valid (wrong, revoked or rotated); ask the organiser for one"
        )


@dataclass(frozen=True)
class Principal:
    role: Role
    owner: str | None = None  # the owner's name, for role "owner"

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def owns(self, bot_owner: str | None) -> bool:
        """May this principal read and manage a bot owned by `bot_owner`?"""
        return self.role == "admin" or (
            self.role == "owner" and bot_owner is not None and bot_owner == self.owner
        )

    @property
    def key(self) -> str:
        """What rate limits count against."""
        return "admin" if self.role == "admin" else f"owner:{self.owner}" if self.owner else "spectator"


SPECTATOR = Principal("spectator")
ADMIN = Principal("admin")


def resolve(store: Store, admin: AdminToken | None, token: str | None) -> Principal:
    """The principal behind `token`; no token is a spectator; a bad token raises Unauthenticated."""
    if not token:
        return SPECTATOR
    if admin is not None and admin.check(token):
        return ADMIN
    owner = owner_of_token(store, token)
    if owner is None:
        raise Unauthenticated(token)
    return Principal("owner", owner)
