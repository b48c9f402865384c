"""Owners and tokens on SQLite and PostgreSQL: only hashes are stored; revoke and rotate take effect at once."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from arena.access.admin import AdminToken
from arena.access.owners import OwnerError, add_owner, list_owners, owner_of_token, revoke_owner, rotate_owner
from arena.access.roles import ADMIN, SPECTATOR, Principal, Unauthenticated, resolve
from arena.store import Store
from arena.store.models import Owner


def test_tokens_are_prefixed_random_and_stored_only_as_hashes(store: Store) -> None:
    a, b = add_owner(store, "alice"), add_owner(store, "bob")
    assert a.startswith("elf_") and b.startswith("elf_") and a != b and len(a) >= 40
    with store.read() as s:
        rows = {o.name: o for o in s.scalars(select(Owner))}
    for name, token in (("alice", a), ("bob", b)):
        assert token not in (rows[name].token_hash, rows[name].token_prefix)
        assert rows[name].token_prefix == token[:8]
    assert owner_of_token(store, a) == "alice" and owner_of_token(store, b) == "bob"
    assert owner_of_token(store, a + "x") is None and owner_of_token(store, "") is None


def test_revoke_and_rotate(store: Store) -> None:
    old = add_owner(store, "carol")
    revoke_owner(store, "carol")
    assert owner_of_token(store, old) is None
    new = rotate_owner(store, "carol")
    assert owner_of_token(store, new) == "carol" and owner_of_token(store, old) is None
    newer = rotate_owner(store, "carol")
    assert owner_of_token(store, new) is None and owner_of_token(store, newer) == "carol"
    assert [(o.name, o.revoked) for o in list_owners(store)] == [("carol", False)]


def test_owner_mistakes_are_one_line_errors(store: Store) -> None:
    add_owner(store, "dave")
    with pytest.raises(OwnerError, match="exists"):
        add_owner(store, "dave")
    with pytest.raises(OwnerError, match="not allowed"):
        add_owner(store, "../etc")
    with pytest.raises(OwnerError, match="no owner named 'nobody'"):
        revoke_owner(store, "nobody")


def test_roles(store: Store) -> None:
    token = add_owner(store, "erin")
    admin = AdminToken.of("a" * 32, "test")
    assert resolve(store, admin, None) == SPECTATOR
    assert resolve(store, admin, "a" * 32) == ADMIN
    erin = resolve(store, admin, token)
    assert erin == Principal("owner", "erin") and erin.owns("erin") and not erin.owns("frank")
    assert ADMIN.owns("frank") and not SPECTATOR.owns("erin")
    with pytest.raises(Unauthenticated, match=r"elf_\S*…") as err:
        resolve(store, admin, token[:-2] + "zz")
    assert token[:-2] not in str(err.value)  # never the whole secret in a message
    with pytest.raises(Unauthenticated):
        resolve(store, None, "a" * 32)  # no admin token configured: nobody is admin
