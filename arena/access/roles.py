"""Roles: who is asking. Every surface (web pages, JSON API, gRPC) turns a presented token into a
`Principal` here, so that the rules of docs/security.md are written once.

- spectator: no token; sees what the rules make public after the fact.
- owner: an owner's API token; also sees and manages its own bots, logs and private records.
- admin: the organiser's admin token; sees and manages everything, and owns the house's bots.

Ownership compares principals, never display names: a bot belongs to the principal `owner_of` its
stored owner, which is the organiser for the house's bots (a reserved name, `arena.store.identity`)
and otherwise the owner of that name, case aside. No owner principal has a reserved name: no owner
is created under one, and no token resolves to one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from arena.access.admin import AdminToken
from arena.access.display import shown
from arena.access.owners import owner_of_token
from arena.store import Store
from arena.store.identity import is_reserved, name_key

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

    @property
    def name(self) -> str:
        """Who asked, as a challenge's `requested_by` shows it: the owner's name, or the role
        ("admin" for the organiser: reserved, so no owner is called that)."""
        return self.owner if self.role == "owner" and self.owner else self.role

    def same_as(self, other: Principal) -> bool:
        """The same principal: the same role, and for owners the same name regardless of case."""
        return self.role == other.role and name_key(self.owner or "") == name_key(other.owner or "")

    def owns(self, bot_owner: str | None) -> bool:
        """May this principal read and manage a bot filed under `bot_owner`? The admin manages every
        bot; an owner, only bots whose principal (`owner_of`) is itself."""
        return self.is_admin or (self.role == "owner" and owner_of(bot_owner).same_as(self))

    @property
    def key(self) -> str:
        """What rate limits count against."""
        return "admin" if self.role == "admin" else f"owner:{self.owner}" if self.owner else "spectator"


SPECTATOR = Principal("spectator")
ADMIN = Principal("admin")


def owner_of(bot_owner: str | None) -> Principal:
    """The principal a bot filed under `bot_owner` belongs to: the organiser for the house's (a
    reserved name such as `house`, or none), else the owner of that name."""
    if not bot_owner or is_reserved(bot_owner):
        return ADMIN
    return Principal("owner", bot_owner)


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
