"""Log in and out with a token, sessions, CSRF, and the management API's refusals over HTTP.

Real store (SQLite and PostgreSQL), real owners (`arena owners add`'s function), the real app over
a real `Service`; the browser-side flows go through the real forms (the CSRF token read off the page).
"""

from __future__ import annotations

import pytest
from account_support import ADMIN, Site, bearer, csrf_in, login, make_site, session_csrf
from fastapi.testclient import TestClient

from arena.access.owners import revoke_owner, rotate_owner
from arena.access.ratelimit import Budget, RateLimiter
from arena.web.sessions import COOKIE, Sessions


@pytest.fixture
def site(database_url, tmp_path) -> Site:
    return make_site(database_url, tmp_path)


def _set_cookie_headers(response) -> list[str]:
    return response.headers.get_list("set-cookie")


# ---- log in -------------------------------------------------------------------------------------
def test_login_sets_an_httponly_strict_session_cookie_without_the_token(site: Site) -> None:
    token = site.tokens["alice"]
    done = login(site.client, token)
    assert done.status_code == 303 and done.headers["location"] == "/me"
    cookies = [c for c in _set_cookie_headers(done) if c.startswith(COOKIE + "=")]
    assert len(cookies) == 1
    cookie = cookies[0]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert "Secure" not in cookie  # plain http on loopback
    sid = site.client.cookies[COOKIE]
    assert token not in sid and token[4:20] not in sid and len(sid) >= 40
    assert all(token not in c for c in _set_cookie_headers(done))
    page = site.client.get("/me")
    assert page.status_code == 200 and "alice" in page.text and token not in page.text
    assert "elf_" + token[4:8] in page.text  # the token's first characters, no more
    assert token[8:] not in page.text


def test_wrong_token_rerenders_the_form_naming_only_its_first_characters(site: Site) -> None:
    wrong = "elf_WRONGwrongWRONGwrong0123456789abcdef"
    page = login(site.client, wrong)
    assert page.status_code == 401 and "WWW-Authenticate" in page.headers
    assert "elf_WRON…" in page.text and wrong[8:] not in page.text
    assert page.text.count("is not valid") == 1 and 'name="token"' in page.text
    assert COOKIE not in site.client.cookies
    assert site.client.get("/me", follow_redirects=False).headers["location"] == "/login"
    empty = login(site.client, "   ")
    assert empty.status_code == 422 and "Paste your token" in empty.text


def test_the_admin_token_logs_in_too(site: Site) -> None:
    assert login(site.client, ADMIN).status_code == 303
    page = site.client.get("/me")
    assert page.status_code == 200 and "organiser" in page.text and ADMIN not in page.text


def test_revoked_and_rotated_tokens_end_their_sessions_on_next_use(site: Site) -> None:
    alice, bob = site.new_client(), site.new_client()
    assert login(alice, site.tokens["alice"]).status_code == 303
    assert login(bob, site.tokens["bob"]).status_code == 303
    assert alice.get("/me").status_code == 200 and bob.get("/me").status_code == 200
    revoke_owner(site.service.store, "alice")
    rotate_owner(site.service.store, "bob")
    for client in (alice, bob):
        gone = client.get("/me", follow_redirects=False)
        assert gone.status_code == 303 and gone.headers["location"] == "/login"
    assert len(site.client.app.state.sessions) == 0  # forgotten, not just refused
    new_bob = rotate_owner(site.service.store, "bob")
    assert login(bob, new_bob).status_code == 303 and bob.get("/me").status_code == 200


def test_sessions_expire(site: Site) -> None:
    now = [1000.0]
    site.client.app.state.sessions = Sessions(lifetime=3600, clock=lambda: now[0])
    assert login(site.client, site.tokens["alice"]).status_code == 303
    now[0] += 3599
    assert site.client.get("/me").status_code == 200
    now[0] += 2
    assert site.client.get("/me", follow_redirects=False).status_code == 303


def test_a_forged_or_stale_session_id_is_nobody(site: Site) -> None:
    client = site.new_client()
    client.cookies.set(COOKIE, "made-up-session-id")
    assert client.get("/me", follow_redirects=False).status_code == 303
    client.cookies.set(COOKIE, "x" * 5000)
    assert client.get("/me", follow_redirects=False).status_code == 303


def test_login_is_rate_limited_per_address(database_url, tmp_path) -> None:
    site = make_site(database_url, tmp_path, limiter=RateLimiter({"login": Budget(3, 60.0)}))
    for _ in range(3):
        assert login(site.client, "elf_guess0000000000").status_code == 401
    refused = login(site.client, site.tokens["alice"])  # even the right token waits
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "Too many log-in attempts" in refused.text
    assert COOKIE not in site.client.cookies


def test_cookie_is_secure_over_https_and_behind_a_trusted_proxy(site: Site) -> None:
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    https = TestClient(site.client.app, base_url="https://arena.example")
    done = login(https, site.tokens["alice"])
    assert done.status_code == 303
    assert "Secure" in next(c for c in _set_cookie_headers(done) if c.startswith(COOKIE))
    # uvicorn --proxy-headers --forwarded-allow-ips=ADDR: the proxy's X-Forwarded-Proto sets the scheme
    proxied = TestClient(ProxyHeadersMiddleware(site.client.app, trusted_hosts="*"))
    form = proxied.get("/login", headers={"X-Forwarded-Proto": "https"})
    assert "Secure" in form.headers["set-cookie"]  # the log-in form's CSRF cookie too
    proxied.cookies.set("elfern_login", form.cookies["elfern_login"])  # httpx keeps Secure ones for https
    done = proxied.post(
        "/login",
        data={"token": site.tokens["bob"], "csrf": csrf_in(form.text)},
        headers={"X-Forwarded-Proto": "https"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    assert "Secure" in next(c for c in _set_cookie_headers(done) if c.startswith(COOKIE))


# ---- CSRF ---------------------------------------------------------------------------------------
def test_login_without_or_with_a_wrong_csrf_token_is_403(site: Site) -> None:
    token = site.tokens["alice"]
    site.client.get("/login")
    assert site.client.post("/login", data={"token": token}).status_code == 403
    assert site.client.post("/login", data={"token": token, "csrf": "wrong"}).status_code == 403
    other = site.new_client()  # a cross-site form: no log-in cookie comes with it
    theirs = csrf_in(site.client.get("/login").text)
    assert other.post("/login", data={"token": token, "csrf": theirs}).status_code == 403
    assert COOKIE not in site.client.cookies and COOKIE not in other.cookies


def test_logout_needs_the_session_csrf_token_and_ends_the_session(site: Site) -> None:
    assert login(site.client, site.tokens["alice"]).status_code == 303
    sid = site.client.cookies[COOKIE]
    assert site.client.post("/logout").status_code == 403
    assert site.client.post("/logout", data={"csrf": "wrong"}).status_code == 403
    login_form_token = site.client.cookies.get("elfern_login") or "x"
    assert site.client.post("/logout", data={"csrf": login_form_token}).status_code == 403
    assert (
        site.client.post("/logout", data={"csrf": "é" * 43}).status_code == 403
    )  # found by the fuzz: was 500
    assert site.client.get("/me").status_code == 200  # still logged in
    out = site.client.post("/logout", data={"csrf": session_csrf(site.client)}, follow_redirects=False)
    assert out.status_code == 303
    assert any(c.startswith(COOKIE + '=""') or "Max-Age=0" in c for c in _set_cookie_headers(out))
    replay = site.new_client()
    replay.cookies.set(COOKIE, sid)  # the old cookie, kept by someone
    assert replay.get("/me", follow_redirects=False).status_code == 303
    assert site.client.post("/logout", data={"csrf": "x"}).status_code == 401


def test_retire_and_challenge_forms_refuse_a_missing_or_wrong_csrf_token(site: Site) -> None:
    store = site.service.store
    for name, owner in (("ann-bot", "alice"), ("ben-bot", "bob")):
        store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path="/nonexistent", language="python"
        )
    assert login(site.client, site.tokens["alice"]).status_code == 303
    for data in ({}, {"csrf": "wrong"}):
        assert site.client.post("/me/bots/ann-bot/retire", data=data).status_code == 403
        challenge = {"my_bot": "ann-bot", **data}
        assert site.client.post("/bots/ben-bot/challenge", data=challenge).status_code == 403
    from sqlalchemy import func, select

    from arena.store import models as m

    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(m.Match)) == 0
        assert not s.scalar(select(m.Bot).where(m.Bot.name == "ann-bot")).retired
    csrf = session_csrf(site.client)
    assert site.client.post("/me/bots/ben-bot/retire", data={"csrf": csrf}).status_code == 403  # bob's
    done = site.client.post("/me/bots/ann-bot/retire", data={"csrf": csrf}, follow_redirects=False)
    assert done.status_code == 303
    anonymous = site.new_client()
    assert anonymous.post("/me/bots/ann-bot/retire", data={"csrf": csrf}).status_code == 401


# ---- the JSON API: Bearer only, every refusal -----------------------------------------------------
MANAGE = [
    ("GET", "/api/me", None),
    ("GET", "/api/me/bots", None),
    ("POST", "/api/bots/ann-bot/retire", None),
    ("GET", "/api/bots/ann-bot/private-logs", None),
    ("POST", "/api/challenges", {"my_bot": "ann-bot", "opponent": "ben-bot"}),
    ("POST", "/api/seasons", {"name": "s1"}),
    ("POST", "/api/seasons/s1/start", None),
    ("POST", "/api/seasons/s1/freeze", None),
    ("POST", "/api/seasons/s1/close", None),
    ("POST", "/api/bots/ann-bot/suspend", {"reason": "x"}),
    ("POST", "/api/bots/ann-bot/reinstate", {"reason": "x"}),
    ("GET", "/api/owners", None),
]
ADMIN_ONLY = [
    x for x in MANAGE if "/seasons" in x[1] or "suspend" in x[1] or "reinstate" in x[1] or "owners" in x[1]
]


def _bots(site: Site) -> None:
    for name, owner in (("ann-bot", "alice"), ("ben-bot", "bob")):
        site.service.store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path="/nonexistent", language="python"
        )


def _call(client: TestClient, method: str, path: str, body, headers=None):
    return client.request(method, path, json=body, headers=headers or {})


def test_every_management_call_needs_a_bearer_token(site: Site) -> None:
    _bots(site)
    revoked = site.tokens["bob"]
    revoke_owner(site.service.store, "bob")
    for method, path, body in MANAGE:
        for headers in ({}, {"Authorization": "Basic YWxpY2U6eA=="}, {"Authorization": "Bearer"}):
            r = _call(site.client, method, path, body, headers)
            assert r.status_code == 401, (method, path, headers, r.text)
            assert r.headers["WWW-Authenticate"].startswith("Bearer")
        for token in ("elf_WRONGwrongWRONGwrong", revoked, "not-a-token-at-all"):
            r = _call(site.client, method, path, body, bearer(token))
            assert r.status_code == 401, (method, path, r.text)
            assert 'error="invalid_token"' in r.headers["WWW-Authenticate"]
            assert token[:8] in r.json()["detail"] and token[8:] not in r.json()["detail"]
    # the pages' cookie is not a credential here: a logged-in browser still gets 401
    assert login(site.client, site.tokens["alice"]).status_code == 303
    for method, path, body in MANAGE:
        assert _call(site.client, method, path, body).status_code == 401, path
    assert (
        site.client.post("/api/bots", files={"bundle": ("a.zip", b"PK")}, data={"name": "x"}).status_code
        == 401
    )


def test_owner_tokens_are_refused_admin_calls_and_other_owners_bots(site: Site) -> None:
    _bots(site)
    alice = bearer(site.tokens["alice"])
    for method, path, body in ADMIN_ONLY:
        r = _call(site.client, method, path, body, alice)
        assert r.status_code == 403 and "admin" in r.json()["detail"], (path, r.text)
    assert site.client.post("/api/bots/ben-bot/retire", headers=alice).status_code == 403
    logs = site.client.get("/api/bots/ben-bot/private-logs", headers=alice)
    assert logs.status_code == 403 and "owner" in logs.json()["detail"]
    theirs = site.client.post(
        "/api/challenges", json={"my_bot": "ben-bot", "opponent": "ann-bot"}, headers=alice
    )
    assert theirs.status_code == 403 and "my_bot" in theirs.json()["detail"]
    assert site.client.get("/api/bots/nobot/private-logs", headers=alice).status_code == 404
    assert site.client.post("/api/bots/nobot/retire", headers=alice).status_code == 404
    assert site.client.get("/api/bots/ann-bot/private-logs", headers=alice).status_code == 200


def test_bad_fields_are_one_line_422_naming_the_field(site: Site) -> None:
    _bots(site)
    alice, admin = bearer(site.tokens["alice"]), bearer(ADMIN)
    cases = [
        (alice, "/api/challenges", {"my_bot": "ann-bot", "opponent": "ben-bot", "deals": "many"}, "deals"),
        (alice, "/api/challenges", {"my_bot": "ann-bot", "opponent": "ben-bot", "deals": 201}, "deals"),
        (alice, "/api/challenges", {"my_bot": "ann-bot"}, "opponent"),
        (
            alice,
            "/api/challenges",
            {"my_bot": "ann-bot", "opponent": "ben-bot", "rules": ["flags=4294967296"]},
            "rules",
        ),
        (alice, "/api/challenges", {"my_bot": "ann-bot", "opponent": "x" * 10_000}, "opponent"),
        (alice, "/api/challenges", {"my_bot": "ann-bot", "opponent": "ann-bot"}, "opponent"),
        (admin, "/api/seasons", {"name": "../evil"}, "name"),
        (admin, "/api/seasons", {"name": "s", "time_control": {"move_ms": -1}}, "move_ms"),
        (admin, "/api/seasons", [1, 2], "body"),
        (admin, "/api/bots/ann-bot/suspend", {"reason": "r" * 600}, "reason"),
    ]
    for headers, path, body, field in cases:
        r = site.client.post(path, json=body, headers=headers)
        assert r.status_code == 422, (path, body, r.text[:300])
        detail = r.json()["detail"]
        assert isinstance(detail, str) and "\n" not in detail and field in detail and len(detail) < 400
    huge = site.client.post("/api/challenges", json={"my_bot": "a", "opponent": "x" * 100_000}, headers=alice)
    assert huge.status_code == 413 and "64 KiB" in huge.json()["detail"]  # refused before parsing
    garbage = site.client.post(
        "/api/challenges", content=b"{not json", headers={**alice, "Content-Type": "application/json"}
    )
    assert garbage.status_code == 422 and isinstance(garbage.json()["detail"], str)
    assert site.client.post("/api/seasons/s1/explode", headers=admin).status_code == 422
    assert site.client.get("/api/bots/ann-bot/private-logs?match_id=-1", headers=alice).status_code == 422
    assert site.client.get("/api/bots/ann-bot/private-logs?limit=x", headers=alice).status_code == 422


def test_calls_are_rate_limited_with_retry_after(database_url, tmp_path) -> None:
    site = make_site(
        database_url, tmp_path, limiter=RateLimiter({"call": Budget(3, 60.0), "anonymous": Budget(2, 60.0)})
    )
    alice = bearer(site.tokens["alice"])
    for _ in range(3):
        assert site.client.get("/api/me", headers=alice).status_code == 200
    r = site.client.get("/api/me", headers=alice)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1 and "rate limit" in r.json()["detail"]
    assert site.client.get("/api/me", headers=bearer(site.tokens["bob"])).status_code == 200  # its own bucket
    for _ in range(2):
        assert site.client.get("/api/challenges").status_code == 200
    r = site.client.get("/api/challenges")
    assert r.status_code == 429 and "Retry-After" in r.headers
    assert site.client.get("/api/me").status_code == 429  # no token: the address's bucket, already empty


def test_admin_runs_seasons_suspends_bots_and_lists_owners(site: Site) -> None:
    _bots(site)
    admin = bearer(ADMIN)
    made = site.client.post(
        "/api/seasons", json={"name": "autumn", "rules": ["flags=1"], "duplicate": True}, headers=admin
    )
    assert made.status_code == 201 and made.json()["status"] == "draft" and made.json()["duplicate"] is True
    again = site.client.post("/api/seasons", json={"name": "autumn"}, headers=admin)
    assert again.status_code == 409
    assert site.client.post("/api/seasons/nope/start", headers=admin).status_code == 404
    assert site.client.post("/api/seasons/autumn/start", headers=admin).json()["status"] == "running"
    assert site.client.post("/api/seasons/autumn/freeze", headers=admin).json()["status"] == "frozen"
    held = site.client.post("/api/bots/ann-bot/suspend", json={"reason": "testing"}, headers=admin)
    assert held.status_code == 200 and held.json()["state"] == "suspended"
    assert "testing" in held.json()["suspension_reason"]
    back = site.client.post("/api/bots/ann-bot/reinstate", headers=admin)
    assert back.status_code == 200 and back.json()["state"] == "active"
    owners = site.client.get("/api/owners", headers=admin).json()["owners"]
    assert [(o["name"], o["bots"]) for o in owners] == [("alice", 1), ("bob", 1)]
    assert all(o["token_prefix"] == site.tokens[o["name"]][:8] for o in owners)
    assert all(site.tokens[o["name"]] not in str(o) for o in owners)
    me = site.client.get("/api/me", headers=admin).json()
    assert me["role"] == "admin" and ADMIN not in str(me)
    # owners over HTTP: the token is in the answer once, never cached; owners may not do it
    made = site.client.post("/api/owners", json={"name": "carol"}, headers=admin)
    assert made.status_code == 201 and made.headers["cache-control"] == "private, no-store"
    carol = made.json()["token"]
    assert (
        carol.startswith("elf_")
        and site.client.get("/api/me", headers=bearer(carol)).json()["owner"] == "carol"
    )
    assert site.client.post("/api/owners", json={"name": "carol"}, headers=admin).status_code == 409
    refused = site.client.post("/api/owners", json={"name": "dave"}, headers=bearer(site.tokens["alice"]))
    assert refused.status_code == 403
    assert site.client.post("/api/owners/carol/revoke", headers=admin).json()["revoked"] is True
    assert site.client.get("/api/me", headers=bearer(carol)).status_code == 401
    fresh = site.client.post("/api/owners/carol/rotate", headers=admin).json()["token"]
    assert fresh != carol and site.client.get("/api/me", headers=bearer(fresh)).status_code == 200
    assert site.client.post("/api/owners/nobody/revoke", headers=admin).status_code == 404


def test_me_and_my_bots(site: Site) -> None:
    _bots(site)
    r = site.client.get("/api/me", headers=bearer(site.tokens["alice"]))
    assert r.json() == {"role": "owner", "owner": "alice", "token": site.tokens["alice"][:8] + "…"}
    mine = site.client.get("/api/me/bots", headers=bearer(site.tokens["alice"])).json()["bots"]
    assert [b["name"] for b in mine] == ["ann-bot"]
    every = site.client.get("/api/me/bots", headers=bearer(ADMIN)).json()["bots"]
    assert [b["name"] for b in every] == ["ann-bot", "ben-bot"]


def test_my_bots_and_the_owners_come_a_page_at_a_time(site: Site) -> None:
    _bots(site)
    site.service.store.add_version(
        "amy-bot", "alice", content_hash="c" * 64, path="/nonexistent", language="c"
    )
    alice = bearer(site.tokens["alice"])
    first = site.client.get("/api/me/bots?limit=1", headers=alice).json()
    assert [b["name"] for b in first["bots"]] == ["amy-bot"] and first["next_page_token"] == "amy-bot"
    rest = site.client.get(
        f"/api/me/bots?limit=1&page_token={first['next_page_token']}", headers=alice
    ).json()
    assert [b["name"] for b in rest["bots"]] == ["ann-bot"] and not rest.get("next_page_token")  # never bob's
    owners = site.client.get("/api/owners?limit=1&page_token=alice", headers=bearer(ADMIN)).json()
    assert [o["name"] for o in owners["owners"]] == ["bob"]
    assert site.client.get("/api/me/bots?limit=101", headers=alice).status_code == 422
    assert site.client.get("/api/me/bots?page_token=" + "x" * 513, headers=alice).status_code == 422
    assert site.client.get("/api/owners?limit=1", headers=alice).status_code == 403


def test_the_older_routes_take_owner_api_tokens(site: Site) -> None:
    _bots(site)
    ok = site.client.get("/api/bots/ann-bot/logs", headers=bearer(site.tokens["alice"]))
    assert ok.status_code == 200 and ok.json()["bot"] == "ann-bot"
    assert site.client.get("/api/bots/ann-bot/logs", headers=bearer(site.tokens["bob"])).status_code == 403
    assert site.client.get("/api/bots/ann-bot/logs").status_code == 401
    page = site.client.post("/bots/ann-bot/logs", data={"token": site.tokens["alice"]})
    assert page.status_code == 200


def test_when_a_bot_was_stopped_is_in_no_answer_even_to_its_owner_or_the_admin(site: Site) -> None:
    """`Bot.stopped_at` (when it was last retired or suspended) only tells workers which zygotes to
    stop: no page, API answer or gRPC message carries it, to anyone."""
    from arena.proto import arena_pb2

    _bots(site)
    alice = bearer(site.tokens["alice"])
    assert site.client.post("/api/bots/ann-bot/retire", headers=alice).status_code == 200
    for who in (None, alice, bearer(ADMIN)):
        for path in ("/api/bots/ann-bot", "/bots/ann-bot"):
            r = site.client.get(path, headers=who or {})
            assert r.status_code == 200 and "stopped_at" not in r.text, (path, who)
    assert "stopped_at" not in arena_pb2.BotInfo.DESCRIPTOR.fields_by_name
