"""A long match's page stays small (issue #30): the page embeds one deal and the summary rows around
it, the viewer fetches other deals from /api/matches/ID/timeline?deal=K, and that per-deal form is
the whole timeline's deal K, step for step, under the same reveal rule. Matches are played here with
seeded random legal cards and recorded through the ladder's `record_result`, as the workers do: a
2,000-deal match, a 40-deal one on the German deck and one ended by a crash inside its second deal."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from record_support import play_record

from arena.engine import Match, Rules
from arena.web.deals import ROWS

LONG = 2000
MARATHON = "marathon-runner-of-the-very-long-distance-deals"  # a long name: tables must wrap it, not clip
FIRST_VIEW = 200_000  # bytes: the first view of any match page (issue #30)
ANY_REPLY = 1_000_000  # bytes: any reply a caller did not ask to download (issue #31)
BLOB = re.compile(r'<script type="application/json" id="timeline-data">(.*?)</script>', re.S)


@dataclass
class Long:
    url: str
    home: Path
    ids: dict[str, int]  # season -> its one match
    records: dict[int, object]  # match id -> the recorded proto
    names: dict[int, list[str]]  # match id -> the seats' labels


SEASONS = {  # season -> (rules, seed, crash at (deal, play) or None)
    "long": ([f"max_deals={LONG}"], 1, None),
    "medium": (["max_deals=40", "deck=german"], 2, None),
    "crash": (["flags=2", "standoff=pot"], 3, (2, 5)),
}


def build_long(url: str, home: Path) -> Long:
    from sqlalchemy import select

    from arena.ladder.record import record_result
    from arena.ladder.seasons import create_season, schedule, start_season
    from arena.proto.codec import encode_record
    from arena.store import MatchResult, Store
    from arena.store.models import Season
    from arena.store.queue import claim

    store = Store.open(url, home=home)
    for name, owner in ((MARATHON, "mia"), ("sprinter", "sam")):
        store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path=str(home / name), language="python"
        )
    out = Long(url, home, {}, {}, {})
    for season_name, (rules, seed, crash) in SEASONS.items():
        create_season(store, season_name, rules=rules, seed=seed)
        start_season(store, season_name)
        with store.tx() as s:
            season = s.scalar(select(Season).where(Season.name == season_name))
            schedule(s, season, 1)
            match = claim(s, "test-runner", season_id=season.id)
            assert match is not None
            mid, v0, v1 = match.id, match.version0_id, match.version1_id
        names = (store.version_by_id(v0).bot.name, store.version_by_id(v1).bot.name)
        rec, winner, verdicts, details, lines, deals = play_record(
            Rules.from_pairs(rules), seed, names, crash
        )
        result = MatchResult(
            winner=winner, void=False, verdicts=verdicts, verdict_details=details, lines=lines,
            deals_played=deals, replay=encode_record(rec), duration=1.0,
        )  # fmt: skip
        assert record_result(store, "test-runner", mid, result).recorded
        out.ids[season_name], out.records[mid] = mid, rec
        out.names[mid] = [f"{n}@1" for n in names]
    store.close()
    assert len(out.records[out.ids["long"]].deals) == LONG
    return out


@pytest.fixture(scope="module")
def long_arena(tmp_path_factory) -> Long:
    home = tmp_path_factory.mktemp("web-long")
    return build_long(f"sqlite:///{home / 'arena.db'}", home)


@pytest.fixture(scope="module")
def long_app(long_arena):
    from arena.web.app import create_app

    return create_app(long_arena.url, long_arena.home)


@pytest.fixture(scope="module")
def long_client(long_app):
    from fastapi.testclient import TestClient

    with TestClient(long_app) as c:
        yield c


def whole_timeline(arena: Long, mid: int, perspective: int | None, deals: int) -> dict:
    """The whole timeline of the public record's first `deals` deals, in one walk (what the route
    serves up to 50 deals). Deal K of a match that goes on after it is the same in the timeline of
    the deals up to K: nothing of a deal depends on the deals after it."""
    from arena.replay.privacy import public_record
    from arena.web.timeline import record_timeline

    record = public_record(arena.records[mid])
    assert deals < len(record.deals)  # so the match is not over, nor ended by a verdict, in either
    del record.deals[deals:]
    return record_timeline(record, arena.names[mid], perspective)


def embedded(page: str) -> dict:
    (blob,) = BLOB.findall(page)
    return json.loads(blob)


@pytest.mark.parametrize("deal", [1, 1000, LONG])
def test_the_first_view_of_a_2000_deal_match_is_small(long_client, long_arena, deal):
    mid = long_arena.ids["long"]
    page = long_client.get(f"/matches/{mid}", params={"deal": deal})
    assert page.status_code == 200
    assert len(page.content) <= FIRST_VIEW, len(page.content)
    tl = embedded(page.text)
    assert (tl["deal"], tl["deal_count"], [d["number"] for d in tl["deals"]]) == (deal, LONG, [deal])
    numbers = [r["number"] for r in tl["rows"]]
    assert len(numbers) == ROWS and deal in numbers and numbers == list(range(numbers[0], numbers[0] + ROWS))
    assert page.text.count('class="deal-link"') == ROWS  # the table's rows: the window, not 2,000
    assert f'max="{LONG}"' in page.text  # the picker reaches every deal


def test_the_page_does_not_grow_with_the_match(long_client, long_arena):
    """The same deal's page of a 40-deal and a 2,000-deal match differ by the summary rows' window
    (the 40-deal one shows all 40, the long one 50) and the deal itself, not by 1,960 deals."""
    sizes = {}
    for season in ("medium", "long"):
        mid = long_arena.ids[season]
        sizes[season] = len(long_client.get(f"/matches/{mid}", params={"deal": 20}).content)
    assert sizes["long"] - sizes["medium"] < 20_000, sizes


@pytest.mark.parametrize("deal", [1, 2, 150])
def test_a_deal_of_the_route_is_that_deal_of_the_whole_timeline(long_client, long_arena, deal):
    """Deal K of the 2,000-deal match against the one-walk timeline (of its deals up to K: the whole
    2,000 would take a minute); every deal up to a match's end is compared in the next test."""
    mid = long_arena.ids["long"]
    for view, perspective in (("omni", None), ("0", 0), ("1", 1)):
        r = long_client.get(f"/api/matches/{mid}/timeline", params={"deal": deal, "view": view})
        assert r.status_code == 200 and len(r.content) <= ANY_REPLY
        got = r.json()
        whole = whole_timeline(long_arena, mid, perspective, deal)
        assert got["deals"] == [whole["deals"][deal - 1]], (deal, view)  # same steps, tricks, result
        for key in ("seats", "deck", "rules", "perspective", "error"):
            assert got[key] == whole[key], key
        assert (got["deal_count"], got["over"]) == (LONG, True)


@pytest.mark.parametrize("season", ["medium", "crash"])
def test_every_deal_of_a_short_match_equals_the_whole_route(long_client, long_arena, season):
    mid = long_arena.ids[season]
    for view in ("omni", "0", "1"):
        whole = long_client.get(f"/api/matches/{mid}/timeline", params={"view": view}).json()
        assert len(whole["deals"]) == len(long_arena.records[mid].deals)
        for k, deal in enumerate(whole["deals"], 1):
            got = long_client.get(f"/api/matches/{mid}/timeline", params={"deal": k, "view": view}).json()
            assert got["deals"] == [deal], (season, view, k)
    if season == "crash":  # the last deal, cut by the crash, carries the verdict's note
        assert "ended here by a verdict" in got["deals"][0]["steps"][-1]["note"]


def test_a_deal_costs_one_deal_of_engine_plays(long_client, long_arena, monkeypatch):
    """Once the match's outline is cached, deal K is re-simulated alone: as many engine plays as
    the deal has cards, not the 60,000 of the deals before it."""
    mid = long_arena.ids["long"]
    assert long_client.get(f"/api/matches/{mid}/timeline", params={"deal": 1}).status_code == 200
    plays = 0
    real_play = Match.play

    def counted(self, card):
        nonlocal plays
        plays += 1
        return real_play(self, card)

    monkeypatch.setattr(Match, "play", counted)
    r = long_client.get(f"/api/matches/{mid}/timeline", params={"deal": 1777, "view": "1"})
    assert r.status_code == 200
    assert plays == len(long_arena.records[mid].deals[1776].plays) <= 32


def test_the_whole_timeline_of_a_long_match_is_refused_with_the_way_out(long_client, long_arena):
    mid = long_arena.ids["long"]
    r = long_client.get(f"/api/matches/{mid}/timeline")
    assert r.status_code == 413 and len(r.content) < 1000
    detail = r.json()["detail"]
    assert f"has {LONG} deals" in detail and f"?deal=1 to ?deal={LONG}" in detail


@pytest.mark.parametrize("deal", [0, LONG + 1])
def test_a_deal_the_match_does_not_have(long_client, long_arena, deal):
    mid = long_arena.ids["long"]
    r = long_client.get(f"/api/matches/{mid}/timeline", params={"deal": deal})
    if deal == 0:
        assert r.status_code == 422  # deal counts from 1
    else:
        assert r.status_code == 404 and f"from 1 to {LONG}" in r.json()["detail"]
    page = long_client.get(f"/matches/{mid}", params={"deal": deal})  # the page takes the nearest
    assert page.status_code == 200 and embedded(page.text)["deal"] == (1 if deal == 0 else LONG)


@pytest.mark.parametrize("view", ["omni", "0", "1"])
def test_the_per_deal_form_keeps_the_reveal_rule(sealed_client, sealed, view):
    """A match not revealed yet (over with its twin running, running, queued) refuses deal K as it
    refuses the whole timeline, with the same reason and nothing of the record."""
    for mid in sealed.unrevealed:
        whole = sealed_client.get(f"/api/matches/{mid}/timeline", params={"view": view})
        for deal in (1, 2):
            r = sealed_client.get(f"/api/matches/{mid}/timeline", params={"deal": deal, "view": view})
            assert r.status_code == whole.status_code == 403
            assert r.json()["detail"] == whole.json()["detail"]
            assert str(sealed.seeds[mid]) not in r.text and "steps" not in r.text
    for mid in sealed.revealed:
        whole = sealed_client.get(f"/api/matches/{mid}/timeline", params={"view": view}).json()
        got = sealed_client.get(f"/api/matches/{mid}/timeline", params={"deal": 1, "view": view}).json()
        assert got["deals"] == whole["deals"][:1] and sealed.mark not in json.dumps(got)


@pytest.mark.browser
@pytest.mark.slow
def test_the_viewer_loads_a_later_deal_when_picked(long_app, long_arena, expected_states):
    """In Chromium: pick deal 1500 of the 2,000 with the deal picker, see its cards (against an
    independent engine replay of that deal), step back across the deal boundary (deal 1499's last
    step, fetched), and move on with PageDown and the next-deal link; each deal is fetched once."""
    from test_browser import ARGS, CHROMIUM, ON_DEAL, READ_BOARD, served

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    mid = long_arena.ids["long"]
    deals = long_arena.records[mid].deals
    rules = Rules.from_pairs(SEASONS["long"][0])
    with served(long_app) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        errors: list[str] = []
        fetched: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: fetched.append(r.url) if "/timeline?deal=" in r.url else None)
        page.goto(f"{base}/matches/{mid}")
        assert page.locator("#play").is_visible()  # the script took over
        page.fill("#deal-input", "1500")
        page.press("#deal-input", "Enter")
        page.wait_for_function(ON_DEAL, arg=1500)
        want = expected_states(rules, deals[1499])
        shown = page.evaluate(READ_BOARD)
        assert (shown["hand0"], shown["hand1"], shown["table"], shown["step"]) == (*want[0][:3], 0)
        assert "deal=1500&step=0" in page.url
        assert page.locator("#deal-results tr.current .deal-link").inner_text() == "1500"
        page.locator("#next").click()
        assert page.evaluate(READ_BOARD)["table"] == want[1][2]
        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("Home")
        page.keyboard.press("ArrowLeft")  # from step 0: the previous deal's last step
        page.wait_for_function(ON_DEAL, arg=1499)
        before = expected_states(rules, deals[1498])
        shown = page.evaluate(READ_BOARD)
        assert shown["step"] == len(before) - 1 and shown["table"] == before[-1][2]
        page.keyboard.press("PageDown")
        page.wait_for_function(ON_DEAL, arg=1500)
        page.locator("#next-deal").click()
        page.wait_for_function(ON_DEAL, arg=1501)
        assert page.evaluate(READ_BOARD)["hand0"] == expected_states(rules, deals[1500])[0][0]
        page.screenshot(
            path=str(Path(__file__).resolve().parents[2] / "artifacts/web/replay-deal-picker.png")
        )
        asked = sorted(int(re.search(r"deal=(\d+)", u).group(1)) for u in fetched)
        assert asked == sorted(set(asked)) and {1499, 1500, 1501} <= set(asked)  # each deal once
        assert errors == []
        browser.close()


def test_without_javascript_back_from_a_deals_start_is_the_previous_deals_end(long_client, long_arena):
    mid = long_arena.ids["medium"]
    page = long_client.get(f"/matches/{mid}", params={"deal": 7, "step": 0}).text
    back = re.search(r'<a id="prev" rel="prev" href="([^"]+)"', page).group(1).replace("&amp;", "&")
    assert back.endswith("?deal=6&step=-1&view=omni")
    there = long_client.get(back).text
    last = len(long_arena.records[mid].deals[5].plays)
    assert f'data-deal="6" data-step="{last}"' in there and f"step {last} of {last}" in there


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 360])
def test_a_long_match_fits_a_wide_screen_and_a_phone(long_app, long_arena, width):
    """Issue #33 §2: a 200-deal match page (deals picked with the compact picker, loaded on demand) and
    the match list fit 1400 px and a phone's 360 px: no key table is wider than its box, nothing
    scrolls sideways. Screenshots: artifacts/web/long-match-WIDTH.png, match-list-WIDTH.png."""
    from test_browser import ARGS, CHROMIUM, CLIPPED, ON_DEAL, served

    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    artifacts = Path(__file__).resolve().parents[2] / "artifacts" / "web"
    artifacts.mkdir(parents=True, exist_ok=True)
    mid = long_arena.ids["long"]
    with served(long_app) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        first = page.goto(f"{base}/matches/{mid}?deal=200")
        assert first is not None and len(first.body()) <= FIRST_VIEW
        page.wait_for_function(ON_DEAL, arg=200)
        assert page.locator("#deal-results tbody tr").count() <= 2 * ROWS + 1  # a window, not 2,000 rows
        assert page.locator("a.deal-link").count() <= 2 * ROWS + 1  # no wall of deal buttons
        assert page.get_attribute("#rules-link", "href") == "/rules"
        # the compact control: one slider over all the deals; the deal picked loads on release
        scrub = page.locator("#deal-scrub")
        assert scrub.is_visible() and scrub.get_attribute("max") == str(LONG)
        page.eval_on_selector(
            "#deal-scrub", "(e) => { e.value = 1500; e.dispatchEvent(new Event('change')); }"
        )
        page.wait_for_function(ON_DEAL, arg=1500)
        assert page.input_value("#deal-input") == "1500" and "deal=1500" in page.url
        page.eval_on_selector(
            "#deal-scrub", "(e) => { e.value = 200; e.dispatchEvent(new Event('change')); }"
        )
        page.wait_for_function(ON_DEAL, arg=200)
        clipped = page.evaluate(CLIPPED)
        page.screenshot(path=str(artifacts / f"long-match-{width}.png"), full_page=True)
        assert all(v <= 0 for v in clipped.values()), clipped
        page.goto(f"{base}/matches")
        clipped = page.evaluate(CLIPPED)
        page.screenshot(path=str(artifacts / f"match-list-{width}.png"), full_page=True)
        assert all(v <= 0 for v in clipped.values()), clipped
        finished = page.locator('table.matches td[data-label="Finished"]').first  # the column once clipped
        box = finished.bounding_box()
        assert finished.is_visible() and box is not None and box["x"] + box["width"] <= width, box
        assert errors == []
        browser.close()


def test_the_live_page_of_a_long_match_is_small(long_client, long_arena):
    """The live page of a finished 2,000-deal match (its board and the newest deals' tricks the live
    feed keeps) stays within the first-view budget too."""
    mid = long_arena.ids["long"]
    page = long_client.get(f"/live/{mid}")
    from arena.web.live import TRICK_DEALS

    assert page.status_code == 200 and 'id="board"' in page.text
    assert len(page.content) <= FIRST_VIEW, len(page.content)
    rows = re.findall(r'<tr class="live-trick" data-id="(\d+)\.', page.text)  # the newest deals' tricks only
    assert rows and len({int(d) for d in rows}) == TRICK_DEALS and int(rows[-1]) == LONG
