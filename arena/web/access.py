"""Who is asking: a spectator (no token), a bot's owner (owner token) or the organiser (admin token).

Tokens come as `Authorization: Bearer TOKEN` or `X-Owner-Token: TOKEN` (the API) or a form field
(the pages). An owner token is the owner's API token (`elf_...`, `arena owners add`); the older HMAC
web token (`arena web --owner-token`, `arena.web.tokens`) still opens the same pages. The admin token is loaded once when the app is made (`create_app(admin_token=...)`)
and compared in constant time by `arena.access.admin.AdminToken`.

Two rules hold for every route that reads a token or answers with private data, each in one place:
- `charge_token`, called by every route that checks a token itself (outside the management calls'
  `Service.caller`), charges the check to the service's `RateLimiter` as gRPC does: a token that
  is no one's costs one of the address's anonymous calls, so guessing costs what an anonymous call
  costs and past the budget the answer is 429 with Retry-After.
- `PRIVATE_ROUTES` and the `PrivateAnswers` middleware: every answer of those routes, errors
  included, carries `Cache-Control: private, no-store`, so no proxy or browser keeps it.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import HTTPException, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.access.admin import AdminToken, bearer
from arena.access.owners import PREFIX, owner_of_token
from arena.access.ratelimit import RateLimited
from arena.access.roles import Principal
from arena.store.identity import is_reserved
from arena.web.tokens import OwnerTokens

REALM = 'Bearer realm="elfern-arena"'


def presented(authorization: str | None, x_owner_token: str | None) -> str | None:
    """The token of the request's headers, if any."""
    if x_owner_token and x_owner_token.strip():
        return x_owner_token.strip()
    return bearer(authorization)


def is_admin(request: Request, token: str | None) -> bool:
    admin: AdminToken | None = request.app.state.admin_token
    return admin is not None and admin.check(token)


def owns(request: Request, owner: str, token: str | None) -> bool:
    """`token` is `owner`'s: its API token (`elf_`, `arena owners add`), or the older HMAC web token.
    No owner token is the house's (a reserved name: the organiser's own bots, the admin token's)."""
    if not token or is_reserved(owner):
        return False
    if token.startswith(PREFIX):
        return owner_of_token(request.app.state.service.store, token) == owner
    tokens: OwnerTokens = request.app.state.tokens
    return tokens.check(owner, token)


def owned_seats(request: Request, owners: Iterable[str], token: str | None) -> frozenset[int]:
    """The seats whose bot's owner `token` belongs to."""
    return frozenset(seat for seat, owner in enumerate(owners) if owns(request, owner, token))


def refuse(token: str | None, what: str) -> HTTPException:
    """401 without a token, 403 with a token that is not the one needed; both say how to get in."""
    if not token:
        return HTTPException(
            401,
            f"{what} is shown only with its owner's or the admin's token: send `Authorization: Bearer TOKEN`",
            headers={"WWW-Authenticate": REALM},
        )
    return HTTPException(
        403,
        f"{what} is shown only with its owner's or the admin's token, and this token is neither",
        headers={"WWW-Authenticate": f'{REALM}, error="insufficient_scope"'},
    )


def charge_token(request: Request, token: str | None, opened_by: str | None) -> None:
    """Charge a route's token check to the service's `RateLimiter`, as `Service.caller` charges a gRPC
    call: a token that opened the answer costs one call of its principal (`opened_by`: "admin" or
    "owner:NAME", `Principal.key`), as does another owner's API token (it is no guess); a token that
    is no one's costs one of the address's anonymous calls; no token costs nothing (nothing was
    checked). 429 with Retry-After over the budget."""
    if not token:
        return
    service = request.app.state.service
    if opened_by is None and token.startswith(PREFIX):
        other = owner_of_token(service.store, token)
        opened_by = owner_key(other) if other is not None else None
    try:
        if opened_by is None:  # the address's anonymous budget, through the one function that keys it
            service.caller(None, request.client.host if request.client else "unknown")
        else:
            service.limiter.hit("call", opened_by)
    except RateLimited as exc:
        budget = service.limiter.budgets["call" if opened_by else "anonymous"]
        who = "this token" if opened_by else "this address with tokens that are no one's"
        raise HTTPException(
            429,
            f"too many requests from {who}: at most {budget.count} a minute; try again in {exc.retry_after} s",
            headers={"Retry-After": str(exc.retry_after)},
        ) from None


def owner_key(owner: str) -> str:
    """The rate-limit key of an owner (`Principal.key`)."""
    return Principal("owner", owner).key


#: The routes (method, path template) whose answers are private to a token's holder: logs, private
#: records, an owner's or the admin's pages and calls. Every route documenting a 401 must be here
#: (tests/web/test_private_headers.py checks it, and the header on each).
PRIVATE_ROUTES = frozenset(
    {
        ("GET", "/api/bots/{name}/logs"),
        ("GET", "/api/matches/{match_id}/private-record.bin"),
        ("POST", "/bots/{name}/logs"),
        ("GET", "/me"),
        ("POST", "/me/upload"),
        ("GET", "/api/me"),
        ("GET", "/api/me/bots"),
        ("POST", "/api/bots"),
        ("GET", "/api/bots/{name}/private-logs"),
        ("POST", "/api/bots/{name}/retire"),
        ("POST", "/api/bots/{name}/suspend"),
        ("POST", "/api/bots/{name}/reinstate"),
        ("POST", "/api/challenges"),
        ("POST", "/api/seasons"),
        ("POST", "/api/seasons/{name}/{step}"),
        ("GET", "/api/owners"),
        ("POST", "/api/owners"),
        ("POST", "/api/owners/{name}/{step}"),
        ("POST", "/api/seasons/{name}/pause"),
        ("POST", "/api/seasons/{name}/resume"),
        ("POST", "/api/seasons/{name}/requeue"),
        ("POST", "/api/seasons/{name}/recompute"),
        ("POST", "/api/matches/{match_id}/void"),
        ("POST", "/api/owners/{name}/suspend"),
        ("POST", "/api/owners/{name}/reinstate"),
        ("GET", "/api/workers"),
        ("POST", "/api/workers/{worker}/drain"),
        ("POST", "/api/workers/{worker}/undrain"),
        ("GET", "/api/admin/actions"),
        ("GET", "/admin"),
        ("POST", "/admin/{action}"),
    }
)
NO_STORE = (b"cache-control", b"private, no-store")


class PrivateAnswers:
    """Pure ASGI middleware: `Cache-Control: private, no-store` on every answer of a private route
    (the route is known once the router has matched it, before the answer starts)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def marked(message: Message) -> None:
            method = "GET" if scope.get("method") == "HEAD" else scope.get("method")
            key = (method, getattr(scope.get("route"), "path", None))
            if message["type"] == "http.response.start" and key in PRIVATE_ROUTES:
                headers = [(k, v) for k, v in message.get("headers", ()) if k.lower() != b"cache-control"]
                message = {**message, "headers": [*headers, NO_STORE]}
            await send(message)

        await self.app(scope, receive, marked)
