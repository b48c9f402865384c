"""The solver's marks in a real browser: log in, press "Analyse this match", then step through the
deal and see the move just played highlighted in the analysis table of the deal shown."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from analysis_support import recorded_matches
from test_browser import ARGS, CHROMIUM

pytestmark = [pytest.mark.browser, pytest.mark.slow]

READ = """() => [...document.querySelectorAll('.analysis-deal')].map(d => ({
  deal: Number(d.dataset.deal), hidden: d.hidden,
  current: [...d.querySelectorAll('tr.current')].map(tr => Number(tr.dataset.play)),
  rows: d.querySelectorAll('tr[data-play]').length}))"""


def test_analyse_button_and_marks_follow_the_viewer(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    import uvicorn
    from account_support import make_site
    from playwright.sync_api import sync_playwright

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    (mid,) = recorded_matches(url, tmp_path, count=1, deals=2)
    site = make_site(url, tmp_path)
    site.client.app.state.analysis_samples = 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(site.client.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    for _ in range(600):
        if srv.started:
            break
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{base}/login")
            page.fill('input[name="token"]', site.tokens["alice"])
            page.locator('form[action="/login"] button[type="submit"]').click()
            page.wait_for_url("**/me")
            page.goto(f"{base}/matches/{mid}")
            page.get_by_role("button", name="Analyse this match").click()
            page.wait_for_url(f"**/matches/{mid}#analysis", timeout=120_000)
            shown = page.evaluate(READ)
            assert [(d["deal"], d["hidden"], d["rows"]) for d in shown][0] == (1, False, 32)
            assert all(d["hidden"] for d in shown[1:]) and len(shown) >= 1
            assert shown[0]["current"] == []  # step 0: no card played yet
            for step in range(1, 4):
                page.locator("#next").click()
                assert page.evaluate(READ)[0]["current"] == [step - 1]
            if len(shown) > 1:  # the next deal's table shows with the next deal
                page.keyboard.press("PageDown")
                now = page.evaluate(READ)
                assert (now[0]["hidden"], now[1]["hidden"]) == (True, False)
            assert not errors
            browser.close()
    finally:
        srv.should_exit = True
        thread.join(10)
