"""The organiser's page (/admin) and the controls' JSON API over the real app (SQLite and
PostgreSQL): spectators and owners are refused (a redirect to log in, 401, 403), the admin pauses a
season (the public standings say "paused"), voids a match (its page shows the reason, and the
ratings agree with `verify_ratings`), suspends an owner and drains a worker, every action in the
organiser's log with the web's address; the answers are private (no-store)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from account_support import ADMIN, Site, bearer, login, make_site, session_csrf
from sqlalchemy import select

from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.ladder.standings import verify_ratings
from arena.store.models import Match
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

# the engine-in-process executor of the ladder tests: real matches and replays, no sandbox
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ladder"))
import engine_play

REASON = "a seat ran a build the owner did not submit"


@pytest.fixture
def site(database_url, tmp_path) -> Site:
    made = make_site(database_url, tmp_path)
    store = made.service.store
    for name, owner, strategy in (("a1", "alice", "high"), ("b1", "bob", "low")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner
        )
    create_season(store, "s", seed=5)
    start_season(store, "s")
    run_pool(
        SeasonRun(store, "s", launcher="local", matches=4), engine_play.play, concurrency=1, threads=True
    )
    return made


def _decisive(site: Site) -> int:
    with site.service.store.read() as s:
        found = s.scalars(select(Match.id).where(Match.status == "done", Match.winner.is_not(None))).first()
    assert found is not None
    return found


def test_spectators_and_owners_are_refused(site: Site) -> None:
    spectator = site.new_client()
    assert spectator.get("/admin", follow_redirects=False).headers["location"] == "/login"
    assert spectator.post("/api/seasons/s/pause").status_code == 401
    owner = bearer(site.tokens["alice"])
    for method, path in (
        ("post", "/api/seasons/s/pause"),
        ("post", "/api/seasons/s/resume"),
        ("post", "/api/seasons/s/requeue"),
        ("post", "/api/seasons/s/recompute"),
        ("post", "/api/owners/bob/suspend"),
        ("post", "/api/owners/bob/reinstate"),
        ("get", "/api/workers"),
        ("post", "/api/workers/box/drain"),
        ("post", "/api/workers/box/undrain"),
        ("get", "/api/admin/actions"),
    ):
        got = getattr(spectator, method)(path, headers=owner)
        assert got.status_code == 403 and "organiser" in got.json()["detail"], (path, got.text)
    got = spectator.post("/api/matches/1/void", headers=owner, json={"reason": "x"})
    assert got.status_code == 403
    assert login(site.client, site.tokens["alice"]).status_code == 303
    assert site.client.get("/admin").status_code == 403
    csrf = session_csrf(site.client)
    assert site.client.post("/admin/pause", data={"csrf": csrf, "season": "s"}).status_code == 403
    assert "/admin" not in site.client.get("/me").text  # no link for an owner
    with site.service.store.read() as s:
        assert s.scalar(select(Match.id).limit(1)) is not None
    assert site.new_client().get("/api/seasons").json()[0]["paused"] is False


def test_the_admin_acts_from_the_page_and_spectators_see_the_effects(site: Site) -> None:
    assert login(site.client, ADMIN).status_code == 303
    page = site.client.get("/admin")
    assert page.status_code == 200 and 'id="season-s"' in page.text
    assert page.headers["cache-control"] == "private, no-store"
    csrf = session_csrf(site.client)
    done = site.client.post("/admin/pause", data={"csrf": csrf, "season": "s"}, follow_redirects=False)
    assert done.status_code == 303 and "paused" in done.headers["location"]
    assert site.client.post("/admin/pause", data={"csrf": "stale", "season": "s"}).status_code == 403

    public = site.new_client()
    assert 'id="paused"' in public.get("/?season=s").text
    assert public.get("/api/seasons").json()[0]["paused"] is True

    match_id = _decisive(site)
    voided = site.client.post("/admin/void", data={"csrf": csrf, "match_id": str(match_id), "reason": REASON})
    assert voided.status_code == 200 and f"match {match_id} voided" in voided.text
    shown = public.get(f"/matches/{match_id}").text
    assert re.search(r'id="void-reason".*voided by the organiser: ' + re.escape(REASON), shown)
    assert public.get(f"/api/matches/{match_id}").json()["void_reason"] == REASON
    assert verify_ratings(site.service.store, "s") == []

    page = site.client.post("/admin/suspend", data={"csrf": csrf, "owner": "bob", "reason": "token leak"})
    assert 'id="owner-bob"' in page.text and "token leak" in page.text
    page = site.client.post("/admin/drain", data={"csrf": csrf, "worker": "box7", "reason": "disk"})
    assert "box7" in page.text and "draining" in page.text
    page = site.client.post("/admin/resume", data={"csrf": csrf, "season": "s"})
    assert 'id="paused"' not in public.get("/?season=s").text
    log = page.text[page.text.index('id="log"') :]
    for action in ("resume", "drain", "suspend-owner", "void", "pause"):
        assert action in log
    assert "web:admin@testclient" in log


def test_the_admin_acts_through_the_json_api(site: Site) -> None:
    admin = bearer(ADMIN)
    api = site.new_client()
    got = api.post("/api/seasons/s/pause", headers=admin)
    assert got.status_code == 200 and got.json()["paused"] is True
    assert got.headers["cache-control"] == "private, no-store"
    assert api.post("/api/seasons/s/start", headers=admin).status_code == 200  # the older steps still route
    assert api.post("/api/seasons/nope/pause", headers=admin).status_code == 404
    match_id = _decisive(site)
    assert api.post(f"/api/matches/{match_id}/void", headers=admin, json={"reason": ""}).status_code == 422
    got = api.post(f"/api/matches/{match_id}/void", headers=admin, json={"reason": REASON})
    assert got.status_code == 200 and got.json()["void_reason"] == REASON
    again = api.post(f"/api/matches/{match_id}/void", headers=admin, json={"reason": REASON})
    assert again.status_code == 409 and "void already" in again.json()["detail"]
    got = api.post("/api/seasons/s/recompute", headers=admin)
    assert got.status_code == 200 and got.json()["results"] == 3
    assert api.post("/api/seasons/s/requeue", headers=admin).json() == {"match_ids": []}
    got = api.post("/api/owners/bob/suspend", headers=admin, json={"reason": "r"})
    assert got.json()["suspended"] is True
    refused = api.post(
        "/api/challenges", headers=bearer(site.tokens["bob"]), json={"my_bot": "b1", "opponent": "a1"}
    )
    assert refused.status_code == 403 and "suspended" in refused.json()["detail"]
    assert api.post("/api/owners/bob/reinstate", headers=admin).json().get("suspended", False) is False
    assert api.post("/api/workers/box1:42/drain", headers=admin).json()["draining"] is True
    assert api.get("/api/workers", headers=admin).json()["workers"][0]["name"] == "box1:42"
    assert api.post("/api/workers/box1:42/undrain", headers=admin).status_code == 200
    actions = api.get("/api/admin/actions", headers=admin).json()["actions"]
    assert [a["action"] for a in actions][:3] == ["undrain", "drain", "reinstate-owner"]
