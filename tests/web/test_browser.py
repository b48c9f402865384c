"""The pages in a real browser: Playwright driving Debian's Chromium (/usr/bin/chromium).

Open the standings, click a bot, open a match, step through a deal with the buttons and the keyboard
arrows, checking at every step that the cards shown are the replay's, then save screenshots under
artifacts/web/. A second test checks phone width and the viewer without JavaScript.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from arena.engine import Rules

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"

# What the viewer shows, read from the live DOM: each hand's cards (or backs) and the trick.
READ_BOARD = """() => {
  const b = document.getElementById('board');
  const hand = (s) => [...b.querySelectorAll(`.hand[data-seat="${s}"] svg.card`)].map(c => c.dataset.card || 'back');
  return {hand0: hand(0), hand1: hand(1), table: [...b.querySelectorAll('.trick svg.card')].map(c => c.dataset.card),
          illegal: [...b.querySelectorAll('.hand svg.card.illegal')].map(c => c.dataset.card),
          deal: Number(b.dataset.deal), step: Number(b.dataset.step)};
}"""
# The key tables of a page, measured in the browser: how much wider each is than the box it sits in
# (its `.scroll` wrapper clips what does not fit), and the page's own horizontal overflow.
CLIPPED = """() => {
  const out = {page: document.documentElement.scrollWidth - document.documentElement.clientWidth};
  for (const t of document.querySelectorAll('main table')) {
    const box = t.closest('.scroll') || t.parentElement;
    const name = t.id || t.className || 'table';
    out[name] = Math.max(out[name] || 0, box.scrollWidth - box.clientWidth, t.scrollWidth - t.clientWidth);
  }
  return out;
}"""
ON_DEAL = "(n) => Number(document.getElementById('board').dataset.deal) === n"  # the viewer shows deal n


@contextmanager
def served(app) -> Iterator[str]:
    """An app on a real socket, served by uvicorn in a thread: its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(600):  # up to 30 s on a busy machine
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def server(app):
    """The test arena's app on a real socket."""
    with served(app) as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


def test_standings_bot_match_and_step_through_a_deal(server, browser, arena, expected_states):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    # 1. the standings
    page.goto(server + "/?season=autumn")
    assert page.locator("h1").inner_text() == "Standings: autumn"
    assert page.locator("table.standings tbody tr").count() == 3
    # 2. click a bot
    page.get_by_role("link", name="bob", exact=True).first.click()
    page.wait_for_url("**/bots/bob")
    assert page.locator("svg.chart polyline").count() >= 1
    # 3. open a match of bob's (the first of the autumn season, French deck)
    mid = min(m for m, r in arena.records.items() if "bob" in r["names"] and r["season"] == "autumn")
    page.locator(f'table.matches a[href="/matches/{mid}"]').click()
    page.wait_for_url(f"**/matches/{mid}")
    assert page.locator("#play").is_visible()  # the script took over the controls
    # 4. step through deal 1: the forward button, then the keyboard arrows, checking every step
    want = expected_states(Rules.from_pairs(["flags=1"]), arena.records[mid]["record"].deals[0])
    assert any(w[3] for w in want)  # this deal has phase-2 steps where the mover may not play some cards

    def check(step: int, url: bool = True) -> None:
        shown = page.evaluate(READ_BOARD)
        hand0, hand1, table, forbidden = want[step]
        assert (shown["deal"], shown["step"]) == (1, step)
        assert (shown["hand0"], shown["hand1"], shown["table"]) == (hand0, hand1, table), f"step {step}"
        assert set(shown["illegal"]) == forbidden, f"step {step}"  # phase 2: the cards the mover may not play
        assert not url or f"deal=1&step={step}" in page.url  # the address follows the viewer

    check(0, url=False)
    for step in range(1, 17):
        page.locator("#next").click()
        check(step)
    page.locator("body").click(position={"x": 5, "y": 5})  # focus the page, not a link
    for step in range(17, len(want)):
        page.keyboard.press("ArrowRight")
        check(step)
    page.keyboard.press("ArrowLeft")
    check(len(want) - 2)
    page.locator("#first").click()
    check(0)
    page.locator("#scrub").fill("20")  # the slider scrubs within the deal
    check(20)
    page.locator("#first").click()
    # the trick history grows with the steps
    page.locator("#last").click()
    assert page.locator("#tricks tbody tr").count() == 16
    # play and pause
    page.locator("#first").click()
    page.locator("#play").click()
    page.wait_for_function("() => Number(document.getElementById('board').dataset.step) >= 2")
    page.locator("#play").click()
    assert page.locator("#play").get_attribute("aria-pressed") == "false"
    # jump to deal 2 (the viewer fetches it, if it did not already)
    if len(arena.records[mid]["record"].deals) > 1:
        page.locator('.deal-link[data-deal="2"]').click()
        page.wait_for_function(ON_DEAL, arg=2)
        page.locator('.deal-link[data-deal="1"]').click()
        page.wait_for_function(ON_DEAL, arg=1)
    page.locator("#first").click()
    for _ in range(5):
        page.locator("#next").click()
    # 5. a screenshot, as an artifact
    page.screenshot(path=str(ARTIFACTS / "replay-omniscient.png"), full_page=True)
    # one seat's view: the opponent's hand is all backs
    labels = page.evaluate("() => JSON.parse(document.getElementById('timeline-data').textContent).seats")
    assert [label.split("@")[0] for label in labels] == list(arena.records[mid]["names"])  # registered
    page.get_by_role("link", name=f"{labels[1]}'s view").click()
    page.wait_for_url("**view=1")
    shown = page.evaluate(READ_BOARD)
    assert shown["step"] == 5 and set(shown["hand0"]) == {"back"} and shown["hand1"] == want[5][1]
    page.screenshot(path=str(ARTIFACTS / "replay-seat-view.png"), full_page=True)
    assert errors == []


def test_api_docs_render_offline(server, browser):
    """FastAPI's OpenAPI page, with Swagger UI served by the arena itself (Chromium here has no internet)."""
    page = browser.new_page()
    page.goto(server + "/api/docs")
    page.get_by_text("/api/matches/{match_id}/timeline").first.wait_for(timeout=60000)
    assert page.get_by_text("Elfern Arena").first.is_visible()
    page.close()


def test_phone_width_and_no_javascript(server, browser, arena):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    phone = browser.new_context(viewport={"width": 360, "height": 740}, java_script_enabled=False)
    page = phone.new_page()
    mid = min(arena.records)
    for path in ("/", "/bots/alice", "/matches", f"/matches/{mid}"):
        page.goto(server + path)
        overflow = page.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{path} is wider than a phone by {overflow}px"
    # without JavaScript the viewer works by links: no play button, forward loads the next step
    assert not page.locator("#play").is_visible() and not page.locator("#scrub").is_visible()
    page.locator("#next").click()
    page.wait_for_url("**step=1**")
    assert page.locator("#board .trick svg.card").count() == 1
    page.screenshot(path=str(ARTIFACTS / "replay-phone-nojs.png"), full_page=True)
    phone.close()


def test_the_glossary_is_one_click_from_a_match(server, browser, arena):
    """From a match page, "How Elfern is played and scored" opens /rules, and a term on the board
    (honours) opens its entry there, scrolled into view, with its meaning as the link's title."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    mid = min(arena.records)
    page.goto(f"{server}/matches/{mid}")
    page.wait_for_selector("#board svg.card")
    term = page.locator("#board a.term", has_text="honours").first
    assert "11" in (term.get_attribute("title") or "")
    term.click()
    page.wait_for_url("**/rules#honours")
    assert page.locator("#honours").is_visible()
    top = page.evaluate("() => document.getElementById('honours').getBoundingClientRect().top")
    assert 0 <= top < 900  # scrolled to the entry
    page.go_back()
    page.locator("#rules-link").click()
    page.wait_for_url("**/rules")
    assert page.locator("h1").inner_text() == "How Elfern is played and scored"
    page.screenshot(path=str(ARTIFACTS / "rules.png"), full_page=True)
    page.close()
