"""Who is asking: a spectator (no token), a bot's owner (owner token) or the organiser (admin token).

Tokens come as `Authorization: Bearer TOKEN` or `X-Owner-Token: TOKEN` (the API) or a form field
(the pages). An owner token is the owner's API token (`elf_...`, `arena owners add`); the older HMAC
web token (`arena web --owner-token`, `arena.web.tokens`) still opens the same pages. The admin token is loaded once when the app is made (`create_app(admin_token=...)`)
and compared in constant time by `arena.access.admin.AdminToken`.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastapi import HTTPException, Request

from arena.access.admin import AdminToken, bearer
from arena.access.owners import PREFIX, owner_of_token
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
    """`token` is `owner`'s: its API token (`elf_`, `arena owners add`), or the older HMAC web token."""
    if not token:
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
