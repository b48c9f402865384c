"""Every match list and lookup runs the same number of SQL statements at two store sizes: the reveal
test is one statement for a page, never one per match or per chunk of the history (issue #30).

Statements are counted on the real engine (`before_cursor_execute`), through the shared queries,
the management API's operations (what gRPC and the CLI call) and the web's data layer."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import delete, func, select

from arena.ladder import queries
from arena.ladder.visibility import unrevealed_ids
from arena.proto import arena_pb2 as pb
from arena.service import ops_bots, ops_results
from arena.service.core import Service
from arena.store import Store
from arena.store.models import Bot, BotTally, BotVersion, Entry, Match, RatingChange, Season
from arena.web.data import WebData
from tests.store.scale_support import counted, fill

SMALL, LARGE = 300, 1600  # finished matches: the large store needs several of the old 500-id chunks


def _reads(store: Store, web: WebData, bot: str, season: str, middle: int) -> dict[str, Callable[[], object]]:
    service = Service(store=store)
    return {
        "grpc ListMatches": lambda: ops_results.list_matches(service, pb.ListMatchesRequest()),
        "grpc ListMatches bot": lambda: ops_results.list_matches(service, pb.ListMatchesRequest(bot=bot)),
        "grpc ListMatches verdict": lambda: ops_results.list_matches(
            service, pb.ListMatchesRequest(verdict="CRASH")
        ),
        "grpc ListMatches page 2": lambda: ops_results.list_matches(
            service, pb.ListMatchesRequest(limit=20, page_token=str(middle))
        ),
        "grpc ListSeasons": lambda: ops_results.list_seasons(service),
        "grpc GetBot": lambda: ops_bots.get_bot(service, bot),
        "web matches": lambda: web.matches(),
        "web matches season+bot": lambda: web.matches(season=season, bot=bot),
        "web matches verdict": lambda: web.matches(verdict="CRASH"),
        "web seasons": lambda: web.seasons(),
        "web bot page": lambda: web.bot(bot),
        "web verdict names": lambda: web.verdict_names(),
        "default season": lambda: web.default_season(),
    }


def _count_all(store: Store, tmp_path, size: int) -> dict[str, int]:
    ladder = fill(store, matches=size)
    web = WebData(str(store.engine.url.render_as_string(hide_password=False)), home=tmp_path)
    web.store = store  # the same engine, so its statements are counted
    web.session = store.read
    out = {}
    with store.read() as s:
        middle = s.scalar(select(func.max(Match.id))) - 100
    for name, read in _reads(store, web, ladder.bots[0], ladder.season, middle).items():
        with counted(store) as statements:
            read()
        out[name] = len(statements)
    return out


@pytest.mark.timeout(120)
def test_reads_run_a_fixed_number_of_statements_whatever_the_history(database_url, tmp_path) -> None:
    small = Store.open(database_url, home=tmp_path / "a")
    counts_small = _count_all(small, tmp_path / "a", SMALL)
    with small.tx() as s:  # the same store, five times the history
        for table in (BotTally, RatingChange, Match, Entry, BotVersion, Bot, Season):
            s.execute(delete(table))
    counts_large = _count_all(small, tmp_path / "b", LARGE)
    assert counts_small == counts_large
    assert max(counts_small.values()) <= 12, counts_small


def test_a_page_of_matches_costs_one_reveal_statement(store: Store) -> None:
    ladder = fill(store, matches=SMALL)
    with store.read() as s, counted(store) as statements:
        page = queries.list_matches(s, queries.MatchFilter(), limit=queries.MAX_LIMIT)
        hidden = unrevealed_ids(s, page.matches)
    assert len(page.matches) == SMALL + 2 * len(ladder.sealed) and page.next_after is None  # twins queued
    assert set(ladder.sealed) <= hidden
    reveal = [x for x in statements if "open_mate" in x]
    assert len(reveal) == 1, statements


def test_now_playing_is_one_list_of_ladder_matches_and_challenges(store: Store) -> None:
    """The home page's "now playing" box: the newest running matches of every kind, challenges
    included, from one page query plus the seats' labels and the seasons' names (three statements,
    no count: the box shows none), at either store size. Before, it listed ladder matches and
    challenges apart, each with its capped count: eight statements per home page."""
    from arena.web.live import NOW_PLAYING, now_playing

    ladder = fill(store, matches=SMALL)
    with store.tx() as s:  # two queued twins start to play; one of them becomes a challenge
        ids = sorted(s.scalars(select(Match.id).where(Match.status == "queued")))[:2]
        for mid in ids:
            match = s.get_one(Match, mid)
            match.status = "running"
        s.get_one(Match, ids[0]).kind = "challenge"
        s.get_one(Match, ids[0]).season_id = None
    service = Service(store=store)
    with counted(store) as statements:
        playing = now_playing(service)
    assert [x["id"] for x in playing] == sorted(ids, reverse=True)
    assert {x["kind"] for x in playing} == {"ladder", "challenge"}
    assert {x["season"] for x in playing} == {ladder.season, ""}
    assert all(len(x["players"]) == 2 and "@" in x["players"][0] for x in playing)
    reads = [x for x in statements if x.lstrip().upper().startswith("SELECT")]  # not SQLite's BEGIN
    assert len(reads) == 3, statements
    assert NOW_PLAYING <= queries.MAX_LIMIT


def test_a_bot_page_costs_the_same_with_or_without_a_sealed_result(store: Store, tmp_path) -> None:
    """The statements of a bot's page and `GetBot` do not depend on whether one of its finished
    matches is sealed at the moment (issue #30: the bench counted one more at M than at S and L)."""
    ladder = fill(store, matches=SMALL, bots=12, open_pairs=1)
    with store.read() as s:
        sealed = s.get_one(Match, ladder.sealed[0])
        hiding = {sealed.version0_id, sealed.version1_id}
    with_sealed = next(b for b, v in zip(ladder.bots, ladder.versions, strict=True) if v in hiding)
    without = next(b for b, v in zip(ladder.bots, ladder.versions, strict=True) if v not in hiding)
    web = WebData(str(store.engine.url.render_as_string(hide_password=False)), home=tmp_path)
    web.store, web.session = store, store.read
    service = Service(store=store)
    counts = {}
    for bot in (with_sealed, without):
        for name, read in (
            ("page", lambda b=bot: web.bot(b)),
            ("grpc", lambda b=bot: ops_bots.get_bot(service, b)),
        ):
            with counted(store) as statements:
                read()
            counts[bot, name] = len(statements)
    assert counts[with_sealed, "page"] == counts[without, "page"], counts
    assert counts[with_sealed, "grpc"] == counts[without, "grpc"], counts
