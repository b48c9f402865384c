"""Who is who, by name: names that differ only in case are one name, and the names the arena uses
for itself are no owner's.

Names follow one ASCII rule (`arena.store.repo.NAME_RE`: letters, digits, `_ . -`), so there are no
look-alike letters from other scripts to fold; what remains is case and the separators. Two names
are the same name when their `name_key`s are equal (bots and owners alike; the database holds it
with unique indexes on `lower(name)`, migration 0007). A name is reserved when, in lower case and
without `_ . -`, it is one of `RESERVED`: no owner may be created under it (`Ad-Min` included), no
token ever resolves to it, and a bot filed under one belongs to the organiser (`HOUSE`).
"""

from __future__ import annotations

import re

#: the owner the organiser's own bots are filed under; only the admin token manages them
HOUSE = "house"
#: names the arena or its organiser go by, compared by `reserved_key`
RESERVED = frozenset(
    {
        "admin",
        "administrator",
        "arena",
        "elfern",
        "house",
        "moderator",
        "organiser",
        "organizer",
        "owner",
        "root",
        "staff",
        "superuser",
        "support",
        "system",
    }
)
RESERVED_RULE = (
    "admin, house, root, system, organiser and the other names the arena goes by are reserved "
    "(in any case, with or without _ . -)"
)
_SEPARATORS = re.compile(r"[._-]")


def name_key(name: str) -> str:
    """The form two names are compared in: `Alice-Random` and `alice-random` are one name. The same
    as SQL's lower() on both databases, since names are ASCII."""
    return name.lower()


def reserved_key(name: str) -> str:
    return _SEPARATORS.sub("", name.lower())


def is_reserved(name: str) -> bool:
    """Is `name` one the arena keeps for itself (`admin`, `House`, `sys_tem`, ...)?"""
    return reserved_key(name) in RESERVED


def filed_owner(owner: str) -> str:
    """The owner a bot is filed under: a reserved name is the house's (the organiser's own)."""
    return HOUSE if is_reserved(owner) else owner
