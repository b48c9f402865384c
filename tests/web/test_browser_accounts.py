"""An owner's journey in a real browser (Playwright driving Debian's Chromium): log in with the token,
upload a bundle (built in the real bwrap sandbox), read its build log, challenge another owner's bot
from its page, find the challenge in My bots, log out. Screenshots land in artifacts/web/."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from account_support import Site, make_site, tar_gz

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"


@pytest.fixture
def served(tmp_path):
    import uvicorn

    site = make_site(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path)
    site.service.store.add_version(
        "ben-bot", "bob", content_hash="ben".ljust(64, "0"), path="/nonexistent", language="python"
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


def test_log_in_upload_see_the_build_log_challenge_and_log_out(served, browser, tmp_path) -> None:
    site, base = served
    site: Site
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    bundle = tmp_path / "randy.tar.gz"
    bundle.write_bytes(tar_gz())
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    # 1. log in: a wrong token first (one line naming its first characters), then the right one
    page.goto(base + "/")
    page.locator("#login-link").click()
    page.wait_for_url("**/login")
    page.fill("#token", "elf_NOTmyTOKENatALL0000")
    page.click("form.token button[type=submit]")
    assert "elf_NOTm…" in page.locator("#login-error").inner_text()
    assert "NOTmyTOKENatALL" not in page.content()
    page.fill("#token", site.tokens["alice"])
    page.click("form.token button[type=submit]")
    page.wait_for_url("**/me")
    assert page.locator("h1").inner_text() == "My bots"
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["elfern_session"]["httpOnly"] and cookies["elfern_session"]["sameSite"] == "Strict"
    assert site.tokens["alice"] not in cookies["elfern_session"]["value"]
    page.screenshot(path=str(ARTIFACTS / "account-my-bots-empty.png"), full_page=True)

    # 2. upload a bundle and see the build result and log
    page.fill("#bot-name", "randy")
    page.set_input_files("#bundle", str(bundle))
    page.click("form.upload button[type=submit]")
    page.wait_for_selector("#build-state", timeout=120_000)
    assert page.locator("#build-state").inner_text() == "built"
    assert page.locator("#build-log").count() == 1
    page.screenshot(path=str(ARTIFACTS / "account-uploaded.png"), full_page=True)
    page.click("text=Back to my bots")
    page.wait_for_url("**/me")
    assert page.locator("#bot-randy").count() == 1
    assert page.locator("#bot-randy details.build-log summary").first.inner_text().startswith("Build log, v1")

    # 3. challenge bob's bot from its page, and follow the result
    page.goto(base + "/bots/ben-bot")
    assert page.locator("#my-bot option").all_inner_texts() == ["randy"]
    page.fill("#deals", "2")
    page.click("#challenge button[type=submit]")
    page.wait_for_url("**/live/*")  # the live board, following the match: not a sealed page
    match_id = int(page.url.rsplit("/", 1)[1])
    assert "randy" in page.content() and "ben-bot" in page.content()
    assert page.text_content("#live-status").strip() == "queued"
    assert "Waiting for a worker" in page.text_content("#live-note")
    assert page.get_attribute("#rules-link", "href") == "/rules"
    page.screenshot(path=str(ARTIFACTS / "account-challenge.png"), full_page=True)
    page.goto(base + "/me")
    assert page.locator(f'#my-challenges a[href="/matches/{match_id}"]').count() == 1
    page.goto(base + "/challenges")
    assert page.locator(f'a[href="/matches/{match_id}"]').count() == 1

    # 4. log out: the session is gone, My bots asks to log in again
    page.click("#logout")
    page.wait_for_url(base + "/")
    assert page.locator("#login-link").count() == 1
    page.goto(base + "/me")
    page.wait_for_url("**/login")
    assert len(site.client.app.state.sessions) == 0
    assert not errors, errors
