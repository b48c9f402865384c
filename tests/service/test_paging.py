"""ListSeasons and ListOwners are paged like ListBots (issue #31: no list reply grows with the store):
at most 100 rows a page, keyset tokens, pages that never overlap; over real gRPC on each database."""

from __future__ import annotations

import grpc
import pytest

from arena.access.owners import add_owner
from arena.ladder.seasons import create_season
from arena.limits import OWNERS_PAGE
from arena.proto import arena_pb2 as pb

from service_support import ADMIN  # isort: skip

ADMIN_MD = [("authorization", f"Bearer {ADMIN}")]


def every_page(call, request, field: str, metadata=()) -> list[list[str]]:
    """The names on each page, following next_page_token."""
    pages = []
    while True:
        answer = call(request, metadata=metadata, timeout=30)
        pages.append([x.name for x in getattr(answer, field)])
        if not answer.next_page_token:
            return pages
        request.page_token = answer.next_page_token


def test_list_seasons_pages_newest_first_and_refuses_a_foreign_token(arena_service) -> None:
    for n in range(5):
        create_season(arena_service.service.store, f"s{n}")
    stub = arena_service.stub()
    pages = every_page(stub.ListSeasons, pb.ListSeasonsRequest(limit=2), "seasons")
    assert pages == [["s4", "s3"], ["s2", "s1"], ["s0"]]
    assert every_page(stub.ListSeasons, pb.ListSeasonsRequest(), "seasons") == [
        ["s4", "s3", "s2", "s1", "s0"]
    ]
    with pytest.raises(grpc.RpcError) as caught:
        stub.ListSeasons(pb.ListSeasonsRequest(page_token="s3"), timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "next_page_token" in caught.value.details()


def test_list_owners_pages_in_name_order_with_each_pages_bot_counts(arena_service) -> None:
    store = arena_service.service.store
    names = [f"o{n:03d}" for n in range(OWNERS_PAGE + 1)]  # with alice and bob: 103 owners
    for name in names:
        add_owner(store, name)
    store.add_version("late-bot", "o100", content_hash="a" * 64, path="/nonexistent", language="python")
    stub = arena_service.stub()
    pages = every_page(stub.ListOwners, pb.ListOwnersRequest(), "owners", ADMIN_MD)
    assert [len(p) for p in pages] == [OWNERS_PAGE, 3]  # a page is never over 100
    assert sum(pages, []) == sorted(["alice", "bob", *names])
    last = stub.ListOwners(pb.ListOwnersRequest(page_token="o099"), metadata=ADMIN_MD, timeout=30)
    assert [(o.name, o.bots) for o in last.owners] == [("o100", 1)] and not last.next_page_token
    with pytest.raises(grpc.RpcError) as caught:  # still the admin's alone
        stub.ListOwners(pb.ListOwnersRequest(), metadata=arena_service.auth(arena_service.tokens["alice"]))
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_revoke_owner_reads_that_one_owner_whatever_the_number_of_owners(arena_service) -> None:
    """RevokeOwner answers with its owner by reading that owner alone: the same statements, the same
    bound values and one owner row read with 3 owners or with 53 (it read every owner before)."""
    from sqlalchemy import event

    from arena.service import ops_admin
    from arena.store.models import Owner

    service, store = arena_service.service, arena_service.service.store
    admin = service.caller(ADMIN, "127.0.0.1")

    def revoke(name: str) -> tuple[list[tuple[str, int]], int]:
        statements: list[tuple[str, int]] = []
        loaded: list[Owner] = []

        def note(_conn, _cursor, statement, params, _context, _many) -> None:
            statements.append((statement, len(params or ())))

        def read(target: Owner, _context: object) -> None:
            loaded.append(target)

        event.listen(store.engine, "before_cursor_execute", note)
        event.listen(Owner, "load", read)
        try:
            info = ops_admin.manage_owner(service, admin, name, "revoke")
        finally:
            event.remove(store.engine, "before_cursor_execute", note)
            event.remove(Owner, "load", read)
        assert info.name == name.lower() and info.revoked
        return statements, len(loaded)

    add_owner(store, "carol")
    few = revoke("carol")
    for n in range(50):
        add_owner(store, f"x{n:02d}")
    add_owner(store, "dave")
    many = revoke("dave")
    assert few == many and few[1] == 2  # the revoke's own read and the answer's: one owner each
    # a name given in another case is that owner (names are unique regardless of case), over gRPC too
    answer = arena_service.stub().RevokeOwner(pb.OwnerRequest(name="Alice"), metadata=ADMIN_MD, timeout=30)
    assert (answer.name, answer.revoked) == ("alice", True)
