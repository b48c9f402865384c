"""Keyset pages stay consistent while matches are recorded: walking a list page by page, with new
matches recorded between the pages, shows every match that was there at the start exactly once
(an OFFSET page would show a row twice each time a newer match pushed it down). Through the
management API (gRPC's ListMatches, the CLI's `arena matches`) and the web's /api/matches."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from arena.cli import cli
from arena.proto import arena_pb2 as pb
from arena.service import ops_results
from arena.service.core import Service
from arena.service.errors import InvalidArgument
from arena.store import Store
from arena.store.models import Match
from arena.web.app import create_app
from tests.store.scale_support import fill, record_one

MATCHES = 120


def test_grpc_pages_skip_nothing_and_repeat_nothing_while_matches_are_recorded(store: Store) -> None:
    ladder = fill(store, matches=MATCHES, open_pairs=0)
    service = Service(store=store)
    before = {x.id for x in ops_results.list_matches(service, pb.ListMatchesRequest(limit=500)).matches}
    seen: list[int] = []
    token, pair = "", 10_000
    while True:
        page = ops_results.list_matches(service, pb.ListMatchesRequest(limit=25, page_token=token))
        seen += [x.id for x in page.matches]
        record_one(store, ladder, pair)  # a newer match lands between two pages
        pair += 1
        if not page.next_page_token:
            break
        token = page.next_page_token
    assert len(seen) == len(set(seen)), "a match was shown twice"
    assert before <= set(seen), f"matches skipped: {sorted(before - set(seen))[:5]}"
    assert seen == sorted(seen, reverse=True)


def test_offset_and_bad_tokens_are_refused_with_the_fix(store: Store) -> None:
    service = Service(store=store)
    with pytest.raises(InvalidArgument, match="page_token"):
        ops_results.list_matches(service, pb.ListMatchesRequest(offset=3))
    with pytest.raises(InvalidArgument, match="page_token 'abc'"):
        ops_results.list_matches(service, pb.ListMatchesRequest(page_token="abc"))
    with pytest.raises(InvalidArgument, match="verdict 'NOPE'"):
        ops_results.list_matches(service, pb.ListMatchesRequest(verdict="NOPE"))


def test_web_pages_follow_next_after_while_matches_are_recorded(database_url, tmp_path) -> None:
    store = Store.open(database_url, home=tmp_path)
    ladder = fill(store, matches=MATCHES, open_pairs=2)
    with TestClient(create_app(database_url, home=tmp_path)) as client:
        first = client.get("/api/matches", params={"limit": 500}).json()
        before = {m["id"] for m in first["matches"]}
        assert not set(ladder.sealed) & {m["id"] for m in first["matches"] if m.get("revealed")}
        seen: list[int] = []
        after = None
        pair = 20_000
        while True:
            params = {"limit": 30, **({"after": after} if after else {})}
            page = client.get("/api/matches", params=params).json()
            seen += [m["id"] for m in page["matches"]]
            record_one(store, ladder, pair)
            pair += 1
            after = page["next_after"]
            if after is None:
                break
            assert page["next_after"] == page["matches"][-1]["id"]  # the last id shown, nothing more
        html = client.get("/matches").text
        assert 'rel="next"' in html and "after=" in html
    assert len(seen) == len(set(seen)) and before <= set(seen)


def test_a_verdict_page_token_does_not_reach_past_a_sealed_match(store: Store) -> None:
    """A sealed match is left out of a verdict list in the query itself: a page ends with a shown
    match, and the next page's token is that match's id, never a hidden one's."""
    ladder = fill(store, matches=MATCHES, open_pairs=3)
    service = Service(store=store)
    with store.tx() as s:  # the sealed (done, twin queued) matches crashed: a spectator must not learn it
        for mid in ladder.sealed:
            s.get_one(Match, mid).verdicts = ["OK", "CRASH"]
    shown: list[int] = []
    token = ""
    while True:
        page = ops_results.list_matches(
            service, pb.ListMatchesRequest(verdict="CRASH", limit=1, page_token=token)
        )
        shown += [x.id for x in page.matches]
        if not page.next_page_token:
            break
        assert int(page.next_page_token) == page.matches[-1].id
        token = page.next_page_token
    assert shown and not set(shown) & set(ladder.sealed)


def test_the_cli_pages_with_after(database_url, tmp_path) -> None:
    """`arena matches --after ID` (locally: the same ListMatches in-process) lists the next, older
    page; the JSON carries next_after and the table ends with the --after that shows more."""
    store = Store.open(database_url, home=tmp_path)
    fill(store, matches=30, open_pairs=0)
    env = {"ARENA_DATABASE_URL": database_url, "ARENA_SERVER": ""}

    def run(*args: str) -> str:
        done = CliRunner().invoke(cli, ["matches", *args], env=env)
        assert done.exit_code == 0, done.output
        return done.output

    first = json.loads(run("--limit", "12", "--json"))
    second = json.loads(run("--limit", "12", "--after", str(first["next_after"]), "--json"))
    ids = [m["id"] for m in first["matches"] + second["matches"]]
    assert first["total"] == 30 and not first["total_capped"] and len(ids) == len(set(ids)) == 24
    assert ids == sorted(ids, reverse=True) and first["next_after"] == first["matches"][-1]["id"]
    assert f"--after {first['next_after']} shows older ones" in run("--limit", "12")
    refused = CliRunner().invoke(cli, ["matches", "--verdict", "NOPE"], env=env)
    assert refused.exit_code == 2 and "verdict 'NOPE'" in refused.output
