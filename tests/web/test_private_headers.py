"""Private answers and token guessing on the web (issue #31), over real HTTP to a real uvicorn.

- Every route that checks a token itself (the JSON logs with `X-Owner-Token` or Bearer, the logs
  form, the private record download) charges a token that is no one's to the address's anonymous
  budget on the service's `RateLimiter`, as gRPC does: 150 wrong tokens from one address end in 429
  with Retry-After, while another address, and a good token, are still answered.
- Every answer of a private route (`arena.web.access.PRIVATE_ROUTES`) carries
  `Cache-Control: private, no-store`, errors included; every route documenting a 401 is one of them.

Each client speaks from its own loopback address (127.0.0.N), so each route's flood has a bucket of
its own and one server serves the whole file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import httpx
import pytest
from account_support import ADMIN, Served, serve
from fastapi.routing import APIRoute

from arena.access.ratelimit import DEFAULT_BUDGETS
from arena.web.access import PRIVATE_ROUTES
from arena.web.tokens import OwnerTokens

FLOOD = 150
BUDGET = DEFAULT_BUDGETS["anonymous"].count  # 120 a minute per address
NO_STORE = "private, no-store"


@pytest.fixture(scope="module")
def site(arena, tmp_path_factory) -> Iterator[Served]:
    """`arena web`'s app under uvicorn over the web tests' ladder, with the default rate limits."""
    served = serve(arena.url, arena.home, 1024 * 1024, limits="")
    try:
        yield served
    finally:
        served.stop()


def _client(site: Served, last_octet: int) -> httpx.Client:
    """A client whose requests come from 127.0.0.<last_octet> (its own rate-limit bucket)."""
    transport = httpx.HTTPTransport(local_address=f"127.0.0.{last_octet}")
    return httpx.Client(base_url=site.base, transport=transport, timeout=30)


def _revealed_match(arena) -> int:
    return min(arena.records)


def _token_routes(arena) -> dict[str, Callable[[httpx.Client, str], httpx.Response]]:
    """Each route that checks a token itself: (method, path, what to send with a token)."""
    match = _revealed_match(arena)
    return {
        "json logs, X-Owner-Token": lambda c, t: c.get("/api/bots/alice/logs", headers={"X-Owner-Token": t}),
        "json logs, Bearer": lambda c, t: c.get(
            "/api/bots/alice/logs", headers={"Authorization": f"Bearer {t}"}
        ),
        "logs form": lambda c, t: c.post("/bots/alice/logs", data={"token": t}),
        "private record": lambda c, t: c.get(
            f"/api/matches/{match}/private-record.bin", headers={"Authorization": f"Bearer {t}"}
        ),
    }


@pytest.mark.parametrize(
    "route", ["json logs, X-Owner-Token", "json logs, Bearer", "logs form", "private record"]
)
def test_wrong_tokens_on_every_token_route_end_in_429_with_retry_after(site, arena, route: str) -> None:
    send = _token_routes(arena)[route]
    octet = 10 + sorted(_token_routes(arena)).index(route)
    statuses = []
    with _client(site, octet) as client:
        for n in range(FLOOD):
            answer = send(client, f"elf_guess{n:040d}" if n % 2 else f"{n:032x}")  # API and web token forms
            statuses.append(answer.status_code)
            if answer.status_code == 429:
                retry = answer.headers.get("Retry-After", "")
                assert retry.isdigit() and int(retry) >= 1, answer.headers
    assert set(statuses[:BUDGET]) <= {401, 403}, statuses[:BUDGET]  # the bucket starts full
    assert 429 in statuses[BUDGET:] and set(statuses) <= {401, 403, 429}, statuses  # it refills 2 a second
    with _client(site, 60 + octet) as other:  # another address has its own budget
        assert send(other, "0" * 32).status_code in (401, 403)


def test_a_good_token_is_charged_to_its_owner_not_to_the_flooded_address(site, arena) -> None:
    """As on gRPC: a token that is no one's costs the address's anonymous budget, a good one its
    owner's; no token is checked and costs nothing (the answer is 401 whatever the budget)."""
    good = OwnerTokens(b"web-server-secret").token("ann")  # web_server.py's secret; ann owns alice
    with _client(site, 30) as client:
        statuses = [
            client.get("/api/bots/alice/logs", headers={"X-Owner-Token": f"{n:032x}"}).status_code
            for n in range(FLOOD)
        ]
        assert 429 in statuses
        answer = client.get("/api/bots/alice/logs", headers={"X-Owner-Token": good})
        assert answer.status_code == 200 and answer.json()["bot"] == "alice"
        assert answer.headers["Cache-Control"] == NO_STORE
        assert client.get("/api/bots/alice/logs").status_code == 401


def test_every_private_route_answers_private_no_store(site, arena) -> None:
    match = _revealed_match(arena)
    admin = {"Authorization": f"Bearer {ADMIN}"}
    owner = OwnerTokens(b"web-server-secret").token("ann")
    calls = {
        ("GET", "/api/bots/{name}/logs"): ("GET", "/api/bots/alice/logs", {"headers": admin}, 200),
        ("GET", "/api/matches/{match_id}/private-record.bin"): (
            "GET",
            f"/api/matches/{match}/private-record.bin",
            {"headers": admin},
            200,
        ),
        ("POST", "/bots/{name}/logs"): ("POST", "/bots/alice/logs", {"data": {"token": owner}}, 200),
        ("GET", "/me"): ("GET", "/me", {}, 303),  # no session: to the log-in page
        ("POST", "/me/upload"): ("POST", "/me/upload", {}, 401),
        ("GET", "/api/me"): ("GET", "/api/me", {"headers": admin}, 200),
        ("GET", "/api/me/bots"): ("GET", "/api/me/bots", {"headers": admin}, 200),
        ("POST", "/api/bots"): ("POST", "/api/bots", {"headers": admin}, 415),
        ("GET", "/api/bots/{name}/private-logs"): (
            "GET",
            "/api/bots/alice/private-logs",
            {"headers": admin},
            200,
        ),
        ("POST", "/api/bots/{name}/retire"): ("POST", "/api/bots/nobody/retire", {"headers": admin}, 404),
        ("POST", "/api/bots/{name}/suspend"): ("POST", "/api/bots/nobody/suspend", {"headers": admin}, 404),
        ("POST", "/api/bots/{name}/reinstate"): (
            "POST",
            "/api/bots/nobody/reinstate",
            {"headers": admin},
            404,
        ),
        ("POST", "/api/challenges"): ("POST", "/api/challenges", {"headers": admin, "json": {}}, 422),
        ("POST", "/api/seasons"): ("POST", "/api/seasons", {"headers": admin, "json": {}}, 422),
        ("POST", "/api/seasons/{name}/{step}"): ("POST", "/api/seasons/nope/start", {"headers": admin}, 404),
        ("GET", "/api/owners"): ("GET", "/api/owners", {"headers": admin}, 200),
        ("POST", "/api/owners"): ("POST", "/api/owners", {"headers": admin, "json": {}}, 422),
        ("POST", "/api/owners/{name}/{step}"): ("POST", "/api/owners/nobody/rotate", {"headers": admin}, 404),
        # the organiser's controls (arena.web.api_controls, arena.web.admin_pages)
        ("POST", "/api/seasons/{name}/pause"): ("POST", "/api/seasons/nope/pause", {"headers": admin}, 404),
        ("POST", "/api/seasons/{name}/resume"): ("POST", "/api/seasons/nope/resume", {"headers": admin}, 404),
        ("POST", "/api/seasons/{name}/requeue"): (
            "POST",
            "/api/seasons/nope/requeue",
            {"headers": admin},
            404,
        ),
        ("POST", "/api/seasons/{name}/recompute"): (
            "POST",
            "/api/seasons/nope/recompute",
            {"headers": admin},
            404,
        ),
        ("POST", "/api/matches/{match_id}/void"): (
            "POST",
            "/api/matches/999999/void",
            {"headers": admin, "json": {"reason": "r"}},
            404,
        ),
        ("POST", "/api/owners/{name}/suspend"): (
            "POST",
            "/api/owners/nobody/suspend",
            {"headers": admin},
            404,
        ),
        ("POST", "/api/owners/{name}/reinstate"): (
            "POST",
            "/api/owners/nobody/reinstate",
            {"headers": admin},
            404,
        ),
        ("GET", "/api/workers"): ("GET", "/api/workers", {"headers": admin}, 200),
        ("POST", "/api/workers/{worker}/drain"): ("POST", "/api/workers/box/drain", {"headers": admin}, 200),
        ("POST", "/api/workers/{worker}/undrain"): (
            "POST",
            "/api/workers/box/undrain",
            {"headers": admin},
            200,
        ),
        ("GET", "/api/admin/actions"): ("GET", "/api/admin/actions", {"headers": admin}, 200),
        ("GET", "/admin"): ("GET", "/admin", {}, 303),  # no session: to the log-in page
        ("POST", "/admin/{action}"): ("POST", "/admin/pause", {}, 401),
    }
    assert set(calls) == PRIVATE_ROUTES  # a route added to the table gets a call here
    with _client(site, 40) as client:
        for method, path, kwargs, status in calls.values():
            answer = client.request(method, path, follow_redirects=False, **kwargs)
            assert answer.status_code == status, (method, path, answer.status_code, answer.text[:200])
            assert answer.headers.get("Cache-Control") == NO_STORE, (method, path, answer.headers)
        for public in ("/api/bots", "/api/seasons", f"/api/matches/{match}", "/"):  # the control
            answer = client.get(public)
            assert answer.status_code == 200 and "no-store" not in answer.headers.get("Cache-Control", "")


def _api_routes(routes: list) -> Iterator[APIRoute]:
    """Every APIRoute of the app, inside included routers too (FastAPI wraps those)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):  # an included router
            yield from _api_routes(route.original_router.routes)


def test_every_route_that_takes_a_token_is_in_the_private_table(app) -> None:
    """A route documenting a 401 answers to a token: its answers are private. The table names only
    routes the app has."""
    found = list(_api_routes(app.routes))
    routes = {(m, r.path) for r in found for m in r.methods}
    documented = {(m, r.path) for r in found if 401 in r.responses for m in r.methods}
    assert len(documented) >= 12, documented  # the management calls and the private record
    assert documented <= PRIVATE_ROUTES, documented - PRIVATE_ROUTES
    assert PRIVATE_ROUTES <= routes, PRIVATE_ROUTES - routes
