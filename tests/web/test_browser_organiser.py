"""The organiser in a real browser (Playwright driving Debian's Chromium): log in with the admin
token, follow the Organiser link, pause a season (the public standings then say "paused"), void a
match with a reason (its page shows it), and see both in the organiser's log. Screenshots land in
artifacts/web/."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import pytest
from account_support import ADMIN, make_site
from sqlalchemy import select

from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.store.models import Match
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ladder"))
import engine_play

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"


@pytest.fixture
def served(tmp_path):
    import uvicorn

    site = make_site(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path)
    store = site.service.store
    for name, owner, strategy in (("a1", "alice", "high"), ("b1", "bob", "low")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner
        )
    create_season(store, "autumn", seed=5)
    start_season(store, "autumn")
    run_pool(
        SeasonRun(store, "autumn", launcher="local", matches=2), engine_play.play, concurrency=1, threads=True
    )
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
    assert srv.started, "uvicorn did not start"
    yield site, f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


@pytest.fixture
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        yield b
        b.close()


def test_the_organiser_pauses_and_voids_from_the_page(served, browser) -> None:
    site, base = served
    with site.service.store.read() as s:
        match_id = s.scalars(select(Match.id).where(Match.status == "done")).first()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: d.accept())  # the void form asks to confirm

    page.goto(base + "/login")
    page.fill("#token", ADMIN)
    page.click("form.token button[type=submit]")
    page.wait_for_url("**/me")
    page.locator("#admin-link").click()
    page.wait_for_url("**/admin")
    page.locator("#season-autumn button", has_text="Pause").click()
    page.wait_for_url("**/admin?done=*")
    assert "season autumn paused" in page.locator("#done").inner_text()
    assert "paused" in page.locator("#season-autumn").inner_text()

    page.fill("#void-match", str(match_id))
    page.fill("#void-reason", "played on a build its owner did not submit")
    page.locator("#void button[type=submit]").click()
    page.wait_for_url("**/admin?done=*")
    log = page.locator("#log").inner_text()
    assert "void" in log and "pause" in log and "web:admin@127.0.0.1" in log
    page.screenshot(path=str(ARTIFACTS / "organiser.png"), full_page=True)

    public = browser.new_page()  # a spectator: no session
    public.goto(base + "/?season=autumn")
    assert "paused" in public.locator("#paused").inner_text()
    public.goto(f"{base}/matches/{match_id}")
    assert "played on a build its owner did not submit" in public.locator("#void-reason").inner_text()
    assert errors == []
