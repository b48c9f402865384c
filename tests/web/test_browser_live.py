"""A live match page in a real browser (Playwright driving Debian's Chromium) while a real match is
played by a real worker (`run_job` in a thread, the bwrap sandbox, a bot that thinks 120 ms a move).

The page is opened while the match is queued; trick rows must then appear in the DOM over time with
no navigation (the Navigation Timing list keeps one entry and a marker set on `window` survives),
and at the end the page must have turned into the replay viewer, showing the commitment verified.
Screenshots go to artifacts/web/.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from live_play import add_bots, public_events, queue_challenge, start_match, status_of

from arena.proto.codec import decode_record

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
ROWS = "() => document.querySelectorAll('#live-tricks tbody tr.live-trick').length"
BOARD = """() => ({
  trick: [...document.querySelectorAll('#live-board .trick svg.card[data-card]')].map((c) => c.dataset.card),
  faces_in_hands: document.querySelectorAll('#live-board .hand svg.card[data-card]').length,
  backs: document.querySelectorAll('#live-board .hand svg.card.back').length,
  honours: [...document.querySelectorAll('#live-board .honours')].map((b) => b.textContent),
  stock: (document.querySelector('#live-board .stock-count') || {}).textContent,
  note: (document.querySelector('#live-board .note') || {}).textContent,
  rules: document.querySelector('#rules-link').getAttribute('href'),
  to_move: [...document.querySelectorAll('#live-board .seat')].filter((e) => e.querySelector('.to-move')).length,
})"""
STILL_HERE = "() => [window.__liveMarker, performance.getEntriesByType('navigation').length]"


@pytest.fixture
def live_server(tmp_path):
    import uvicorn

    from arena.store import Store
    from arena.web.app import create_app

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    store = Store.open(url, home=tmp_path)
    add_bots(store, tmp_path, ms=120)
    app = create_app(url, tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(600):
        if srv.started:
            break
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}", store
    srv.should_exit = True
    thread.join(10)
    store.close()


@pytest.fixture
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


def test_a_live_page_updates_in_place_and_turns_into_the_viewer(live_server, browser) -> None:
    base, store = live_server
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    mid = queue_challenge(store)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{base}/live/{mid}")
    assert page.text_content("#live-status").strip() == "queued"
    assert page.evaluate(ROWS) == 0
    page.evaluate("() => { window.__liveMarker = 'same page'; }")

    played = start_match(store, mid)
    counts: list[int] = []
    drawn: list[dict] = []
    while status_of(store, mid) != "done" and played.thread.is_alive():
        n = page.evaluate(ROWS)  # the DOM as the events arrive
        if not counts or n != counts[-1]:
            counts.append(n)
            assert page.evaluate(STILL_HERE) == ["same page", 1]  # no reload, no navigation
            if len(counts) == 4 and n > 0:
                page.screenshot(path=str(ARTIFACTS / "live-playing.png"), full_page=True)
                board = page.evaluate(BOARD)  # the viewer's table, drawn from the events
                drawn.append(board)
        page.wait_for_timeout(50)
    played.join()
    assert len([n for n in counts if n > 0]) >= 3, counts  # rows came over time, while it played
    # while it played, the live page drew the table: the trick's two faces, hands as backs only, the
    # honours each seat has taken, the stock, and a link to the rules
    assert drawn, counts
    board = drawn[0]
    assert len(board["trick"]) == 2 and board["faces_in_hands"] == 0 and board["backs"] > 0, board
    assert all(h.isdigit() for h in board["honours"]) and len(board["honours"]) == 2, board
    assert board["stock"].isdigit() and "Honours" in board["note"], board
    assert board["rules"] == "/rules", board
    # one seat carries the "to move" mark (who leads the next trick shown), none once a deal is over
    assert board["to_move"] == (0 if "Deal over" in board["note"] else 1), board
    assert counts == sorted(counts)
    assert page.text_content("#live-status").strip() in ("running", "done")

    # the end: the page becomes the replay viewer of /matches/ID, in place
    page.wait_for_selector("#viewer", timeout=60_000)
    assert page.evaluate(STILL_HERE) == ["same page", 1]
    assert page.evaluate("() => location.pathname") == f"/matches/{mid}"
    assert "commitment verified" in page.text_content("#live-ended")
    page.wait_for_selector("#board svg.card")  # the viewer's script drew the board
    page.screenshot(path=str(ARTIFACTS / "live-viewer.png"), full_page=True)
    assert not errors, errors

    # without JavaScript: the finished match's live page shows the check and the way to the viewer
    plain = browser.new_context(java_script_enabled=False).new_page()
    plain.goto(f"{base}/live/{mid}")
    assert "commitment verified" in plain.text_content("#live-verified")
    assert plain.get_attribute("#live-note a", "href") == f"/matches/{mid}"
    tricks = [e for e in public_events(decode_record(store.replay(mid))) if e[0] == "trick"]
    assert plain.locator("#live-tricks tbody tr.live-trick").count() == len(tricks)
    assert plain.locator("#board .trick svg.card").count() == 2  # the board, drawn by the server

    # on a phone the live page (board and lists) fits: nothing wider than its box
    from test_browser import CLIPPED

    phone = browser.new_context(viewport={"width": 360, "height": 740}, java_script_enabled=False).new_page()
    phone.goto(f"{base}/live/{mid}")
    clipped = phone.evaluate(CLIPPED)
    phone.screenshot(path=str(ARTIFACTS / "live-phone.png"), full_page=True)
    assert all(v <= 0 for v in clipped.values()), clipped
