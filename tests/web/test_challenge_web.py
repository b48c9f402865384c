"""Challenges over HTTP: the form on an opponent's page, the redirect to the match, the lists that show
it (My bots, /challenges, never the ladder's /matches), the JSON calls and their refusals."""

from __future__ import annotations

import re

import pytest
from account_support import ADMIN, STOPPED, Site, bearer, login, make_site, session_csrf
from sqlalchemy import select

from arena.access.ratelimit import Budget, RateLimiter
from arena.store import models as m


def _bots(site: Site) -> None:
    for name, owner in (("ann-bot", "alice"), ("ann-two", "alice"), ("ben-bot", "bob"), ("ben-old", "bob")):
        site.service.store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path="/nonexistent", language="python"
        )
    site.service.store.retire("ben-old")


@pytest.fixture
def site(database_url, tmp_path) -> Site:
    made = make_site(database_url, tmp_path)
    _bots(made)
    return made


def _match(site: Site, match_id: int) -> m.Match:
    with site.service.store.read() as s:
        found = s.get(m.Match, match_id)
        assert found is not None
        s.expunge(found)
        return found


def test_the_form_shows_only_when_logged_in(site: Site) -> None:
    page = site.client.get("/bots/ben-bot")
    assert page.status_code == 200 and "/bots/ben-bot/challenge" not in page.text
    assert "Log in</a> with your owner token to challenge" in page.text
    assert login(site.client, site.tokens["alice"]).status_code == 303
    page = site.client.get("/bots/ben-bot")
    assert 'action="/bots/ben-bot/challenge"' in page.text
    assert re.findall(r"<option>([^<]+)</option>", page.text) == ["ann-bot", "ann-two"]
    own = site.client.get("/bots/ann-bot")  # no challenging yourself with the same bot
    assert re.findall(r"<option>([^<]+)</option>", own.text) == ["ann-two"]
    retired = site.client.get("/bots/ben-old")
    assert "/bots/ben-old/challenge" not in retired.text and "retired" in retired.text


def test_challenge_from_the_page_and_follow_it(site: Site) -> None:
    assert login(site.client, site.tokens["alice"]).status_code == 303
    csrf = session_csrf(site.client)
    done = site.client.post(
        "/bots/ben-bot/challenge",
        data={"csrf": csrf, "my_bot": "ann-bot", "deals": "3"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    match_id = int(done.headers["location"].rsplit("/", 1)[1])
    assert done.headers["location"] == f"/live/{match_id}"  # the live board, not a sealed page
    match = _match(site, match_id)
    assert match.kind == "challenge" and match.season_id is None and match.status == "queued"
    assert match.requested_by == "alice" and "max_deals=3" in match.rules
    followed = site.client.get(done.headers["location"])
    assert followed.status_code == 200 and "ann-bot" in followed.text and "ben-bot" in followed.text
    assert 'id="live"' in followed.text and 'http-equiv="refresh"' in followed.text  # it follows the match
    assert 'href="/rules"' in followed.text
    mine = site.client.get("/me")
    section = mine.text[mine.text.index('id="my-challenges"') :]
    assert f'href="/matches/{match_id}"' in section
    listed = site.client.get("/challenges")
    assert f'href="/matches/{match_id}"' in listed.text and "ann-bot@1 v ben-bot@1" in listed.text
    # apart from the ladder: the ladder's lists never show it
    assert site.client.get("/api/matches").json()["total"] == 0
    api = site.client.get("/api/challenges").json()
    assert [x["id"] for x in api["matches"]] == [match_id] and api["matches"][0]["kind"] == "challenge"
    assert api["matches"][0]["has_seed"] is False and api["matches"][0]["seed"] == 0  # not played: sealed


def test_finished_challenges_stay_off_the_ladder_list(site: Site) -> None:
    assert login(site.client, site.tokens["alice"]).status_code == 303
    done = site.client.post(
        "/bots/ben-bot/challenge",
        data={"csrf": session_csrf(site.client), "my_bot": "ann-bot"},
        follow_redirects=False,
    )
    match_id = int(done.headers["location"].rsplit("/", 1)[1])
    with site.service.store.tx() as s:
        match = s.get(m.Match, match_id)
        match.status, match.winner, match.verdicts, match.lines = "done", 0, ["OK", "OK"], [7, 2]
    assert site.client.get("/api/matches").json()["total"] == 0
    assert f'href="/matches/{match_id}"' not in site.client.get("/matches").text
    only = site.client.get("/api/matches", params={"kind": "challenge"}).json()
    assert [x["id"] for x in only["matches"]] == [match_id]
    assert site.client.get("/api/challenges", params={"status": "done"}).json()["total"] == 1
    # a bot's page lists its challenges apart from its other matches
    page = site.client.get("/bots/ann-bot").text
    recent = page[page.index('id="recent"') : page.index('id="recent-challenges"')]
    challenges = page[page.index('id="recent-challenges"') :]
    assert f'href="/matches/{match_id}"' not in recent and "No matches." in recent
    assert f'href="/matches/{match_id}"' in challenges
    bot = site.client.get("/api/bots/ann-bot").json()
    assert bot["recent"] == [] and [x["id"] for x in bot["challenges"]] == [match_id]


def test_page_challenge_refusals(site: Site) -> None:
    anonymous = site.new_client()
    assert (
        anonymous.post("/bots/ben-bot/challenge", data={"my_bot": "ann-bot", "csrf": "x"}).status_code == 401
    )
    assert login(site.client, site.tokens["alice"]).status_code == 303
    csrf = session_csrf(site.client)
    cases = [
        ("ann-two", {"my_bot": "ben-bot"}, 403),  # not mine
        ("nobody", {"my_bot": "ann-bot"}, 404),
        ("ben-old", {"my_bot": "ann-bot"}, 409),  # retired
        ("ann-bot", {"my_bot": "ann-bot"}, 422),  # itself
        ("ben-bot", {"my_bot": "ann-bot", "deals": "201"}, 422),
        ("ben-bot", {"my_bot": "ann-bot", "deals": "lots"}, 422),
    ]
    for opponent, data, status in cases:
        r = site.client.post(f"/bots/{opponent}/challenge", data={"csrf": csrf, **data})
        assert r.status_code == status, (opponent, data, r.text[:300])
    with site.service.store.read() as s:
        assert list(s.scalars(select(m.Match))) == []


def test_api_challenges(site: Site) -> None:
    alice = bearer(site.tokens["alice"])
    made = site.client.post(
        "/api/challenges",
        json={"my_bot": "ann-bot", "opponent": "ben-bot", "deals": 2, "rules": ["flags=1"]},
        headers=alice,
    )
    assert made.status_code == 201, made.text
    info = made.json()["match"]
    assert info["kind"] == "challenge" and info["players"] == ["ann-bot@1", "ben-bot@1"]
    assert info["requested_by"] == "alice" and len(info["commitment"]) == 64
    by_admin = site.client.post(
        "/api/challenges", json={"my_bot": "ben-bot", "opponent": "ann-bot"}, headers=bearer(ADMIN)
    )
    assert by_admin.status_code == 201 and by_admin.json()["match"]["requested_by"] == "admin"
    assert (
        site.client.post(
            "/api/challenges", json={"my_bot": "ann-bot", "opponent": "nobody"}, headers=alice
        ).status_code
        == 404
    )
    retired = site.client.post(
        "/api/challenges", json={"my_bot": "ann-bot", "opponent": "ben-old"}, headers=alice
    )
    assert retired.status_code == 409 and "retired" in retired.json()["detail"]
    listed = site.client.get("/api/challenges", params={"bot": "ann-bot"}).json()
    assert listed["total"] == 2
    assert site.client.get("/api/challenges", params={"status": "exploded"}).status_code == 422


def test_challenges_are_rate_limited(tmp_path) -> None:
    site = make_site(
        f"sqlite:///{tmp_path / 'arena.db'}",
        tmp_path,
        limiter=RateLimiter({"challenge": Budget(1, 3600.0)}, clock=STOPPED),  # no refill: exactly an hour
    )
    _bots(site)
    alice = bearer(site.tokens["alice"])
    body = {"my_bot": "ann-bot", "opponent": "ben-bot"}
    assert site.client.post("/api/challenges", json=body, headers=alice).status_code == 201
    limited = site.client.post("/api/challenges", json=body, headers=alice)
    assert limited.status_code == 429 and limited.headers["Retry-After"] == "3600"
    assert login(site.client, site.tokens["alice"]).status_code == 303
    page = site.client.post(
        "/bots/ben-bot/challenge", data={"csrf": session_csrf(site.client), "my_bot": "ann-bot"}
    )
    assert page.status_code == 429 and page.headers["Retry-After"] == "3600"


def test_api_challenges_refuse_the_long_match_bypasses_and_cap_an_owner(site: Site) -> None:
    """The JSON route holds the same limits as gRPC (issue #31): no long match through `rules` or the
    clock, and no more than `open_per_owner` queued or running per owner; nothing refused is stored."""
    from arena.service.challenge_limits import LIMITS

    alice = bearer(site.tokens["alice"])
    body = {"my_bot": "ann-bot", "opponent": "ben-bot"}
    refused = [
        ({"rules": ["max_deals=10000"]}, "max_deals at most 200, got 10000"),
        ({"rules": ["flags=10000"]}, "flags at most 25, got 10000"),
        ({"deals": 201}, "deals at most 200, got 201"),
        (
            {"deals": 200, "time_control": {"move_ms": 60000, "bank_ms": 3600000}},
            f"at most {LIMITS.wall_seconds} s",
        ),
    ]
    for extra, said in refused:
        r = site.client.post("/api/challenges", json={**body, **extra}, headers=alice)
        assert r.status_code == 422 and said in r.json()["detail"], (extra, r.text[:300])
    with site.service.store.read() as s:
        assert list(s.scalars(select(m.Match))) == []
    for _ in range(LIMITS.open_per_owner):
        assert (
            site.client.post("/api/challenges", json={**body, "deals": 1}, headers=alice).status_code == 201
        )
    over = site.client.post("/api/challenges", json=body, headers=alice)
    assert over.status_code == 429 and over.headers["Retry-After"] == str(LIMITS.retry_after)
    assert f"the limit per owner is {LIMITS.open_per_owner}" in over.json()["detail"]
    assert login(site.client, site.tokens["alice"]).status_code == 303  # the page's form: the same count
    page = site.client.post(
        "/bots/ben-bot/challenge", data={"csrf": session_csrf(site.client), "my_bot": "ann-two"}
    )
    assert page.status_code == 429
