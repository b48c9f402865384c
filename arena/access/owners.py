"""Owners and their API tokens: create, list, revoke, rotate, and find the owner of a presented token.

A token is `elf_` followed by 43 URL-safe characters (256 random bits): the prefix lets secret
scanners spot a leaked one. Only its SHA-256 is stored, so a copy of the database hands out no
token; the first characters are kept to name a token in messages ("elf_Xy3q…").

Owner names are unique regardless of case, and the reserved ones (`admin`, `house`, ...:
`arena.store.identity`) are no owner's: `add_owner` refuses them, and `owner_of_token` never
resolves to one (even a row written before the rule, which migration 0007 renames anyway).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.access.display import SHOWN
from arena.store import Store, StoreError
from arena.store.identity import RESERVED_RULE, is_reserved, name_key
from arena.store.models import Bot, Notice, Owner, SuspensionKind, utcnow
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
    suspended: str | None = None  # the organiser's reason while the owner is suspended

    def to_dict(self) -> dict[str, object]:
        return {
            "suspended": self.suspended is not None,
            "suspension_reason": self.suspended or "",
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


def _named(s: Session, name: str) -> Owner | None:
    """The owner called `name` regardless of case."""
    return s.scalar(select(Owner).where(func.lower(Owner.name) == name_key(name)))


def _owner(s: Session, name: str) -> Owner:
    owner = _named(s, name)
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
    if is_reserved(name):
        raise OwnerError(f"owner name {name!r} is reserved: {RESERVED_RULE}; pick another name")
    token = new_token()
    try:
        with store.tx() as s:
            _refuse_taken(s, name)
            s.add(Owner(name=name, token_hash=token_hash(token), token_prefix=token[:SHOWN]))
    except IntegrityError:  # the same name added at the same moment: the unique index on lower(name)
        with store.read() as s:
            _refuse_taken(s, name)
        raise
    return token


def _refuse_taken(s: Session, name: str) -> None:
    taken = _named(s, name)
    if taken is None:
        return
    if taken.name == name:
        raise OwnerError(f"owner {name!r} exists; `arena owners rotate {name}` gives it a new token")
    raise OwnerError(
        f"owner name {name!r} is taken by {taken.name!r} (names that differ only in case are the "
        f"same name); pick another name, or `arena owners rotate {taken.name}` for a new token"
    )


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


def list_owners(store: Store, after: str = "", limit: int | None = None) -> list[OwnerInfo]:
    """Owners in name order, after the name `after`, at most `limit` (None: all), each with its number
    of bots (counted for these owners only)."""
    with store.read() as s:
        query = select(Owner).order_by(Owner.name)
        if after:
            query = query.where(Owner.name > after)
        if limit is not None:
            query = query.limit(limit)
        return _infos(s, list(s.scalars(query)))


def owner_info(store: Store, name: str) -> OwnerInfo:
    """The one owner called `name` (regardless of case), as listings show it: two statements
    whatever the number of owners; OwnerError if there is none."""
    with store.read() as s:
        return _infos(s, [_owner(s, name)])[0]


def _infos(s: Session, rows: list[Owner]) -> list[OwnerInfo]:
    """`rows` as listings show them, their bots counted in one statement for these owners only."""
    keys = {name_key(o.name) for o in rows}
    counts: dict[str, int] = {}
    if keys:
        owned = select(Bot.owner, func.count()).where(func.lower(Bot.owner).in_(keys)).group_by(Bot.owner)
        for owner, n in s.execute(owned):
            counts[name_key(owner)] = counts.get(name_key(owner), 0) + n
    return [
        OwnerInfo(
            o.name,
            o.token_prefix,
            o.created_at,
            o.rotated_at,
            o.revoked_at is not None,
            counts.get(name_key(o.name), 0),
            (o.suspension_reason or "") if o.suspended_at is not None else None,
        )
        for o in rows
    ]


def suspend_owner(store: Store, name: str, reason: str, *, on: bool) -> int:
    """Suspend the owner `name` (on) or reinstate it; returns how many of its bots changed.

    Suspending suspends every bot of theirs not already suspended by the organiser, as
    `SuspensionKind.OWNER` (so none is scheduled); their token still reads, but submitting and
    challenging are refused (`refuse_suspended`). Reinstating lifts exactly those suspensions."""
    from arena.store.repo import suspend_bot

    changed = 0
    with store.tx() as s:
        owner = _owner(s, name)
        bots = list(
            s.scalars(select(Bot).where(func.lower(Bot.owner) == name_key(owner.name)).order_by(Bot.id))
        )
        if on:
            owner.suspended_at, owner.suspension_reason = utcnow(), reason
            why = f"owner {owner.name} suspended by the organiser: {reason or 'no reason given'}"
            for bot in bots:
                if not (bot.suspended and bot.suspension_kind == SuspensionKind.ORGANISER):
                    suspend_bot(s, bot.id, why, SuspensionKind.OWNER)
                    changed += 1
            return changed
        owner.suspended_at, owner.suspension_reason = None, None
        for bot in bots:
            if bot.suspended and bot.suspension_kind == SuspensionKind.OWNER:
                bot.suspended, bot.suspension_reason, bot.suspension_kind = False, None, None
                s.add(
                    Notice(
                        bot_id=bot.id, kind="reinstated", message=f"owner {owner.name} reinstated: {reason}"
                    )
                )
                changed += 1
    return changed


class OwnerSuspended(OwnerError):
    """A suspended owner asked to submit or challenge."""


def refuse_suspended(store: Store, name: str | None) -> None:
    """OwnerSuspended when the owner `name` is suspended (a spectator, the admin and the house never are)."""
    if not name:
        return
    with store.read() as s:
        owner = _named(s, name)
        if owner is not None and owner.suspended_at is not None:
            raise OwnerSuspended(
                f"owner {owner.name} is suspended by the organiser ({owner.suspension_reason or 'no reason given'}); "
                "your token still reads, but cannot submit or challenge until the organiser reinstates you"
            )


def owner_of_token(store: Store, token: str | None) -> str | None:
    """The name of the live owner whose token this is, else None (never a reserved name)."""
    if not token or not token.startswith(PREFIX):
        return None
    with store.read() as s:
        owner = s.scalar(
            select(Owner).where(Owner.token_hash == token_hash(token), Owner.revoked_at.is_(None))
        )
        return owner.name if owner is not None and not is_reserved(owner.name) else None
