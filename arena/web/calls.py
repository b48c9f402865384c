"""Calling the management operations (`arena.service`) from the web: who is asking, off the event loop,
and every error an operation raises turned into its HTTP status (never a 500 for a caller's mistake).

The JSON API authenticates with `Authorization: Bearer TOKEN` only: it never reads the session
cookie, so a page on another site cannot make a logged-in browser act through it (no CSRF exposure).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import HTTPException, Request
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from starlette.concurrency import run_in_threadpool

from arena.access.admin import bearer
from arena.access.roles import Principal
from arena.service.core import Service
from arena.service.errors import status_of
from arena.web.access import REALM


def service_of(request: Request) -> Service:
    return request.app.state.service


def address(request: Request) -> str:
    """The caller's address (the proxy's client when uvicorn trusts its X-Forwarded-For)."""
    return request.client.host if request.client else "unknown"


def http_error(exc: BaseException) -> HTTPException | None:
    """The HTTPException for an operation's error; None for a bug (left to surface as a 500)."""
    status = status_of(exc)
    if status is None:
        return None
    headers = {}
    if status.http == 401:
        headers["WWW-Authenticate"] = f'{REALM}, error="invalid_token"'
    if status.retry_after is not None:
        headers["Retry-After"] = str(status.retry_after)
    return HTTPException(status.http, status.message, headers=headers or None)


async def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`fn(*args)` in the threadpool (database reads and sandboxed builds never block the event loop)."""
    try:
        return await run_in_threadpool(fn, *args, **kwargs)
    except HTTPException:
        raise
    except Exception as exc:
        mapped = http_error(exc)
        if mapped is None:
            raise
        raise mapped from None


def no_token(what: str) -> HTTPException:
    return HTTPException(
        401,
        f"{what} needs an API token: send `Authorization: Bearer TOKEN` (an owner's elf_ token or the admin's)",
        headers={"WWW-Authenticate": REALM},
    )


def bearer_token(request: Request) -> str | None:
    """The token of the Authorization header; 401 for a header that is not `Bearer TOKEN`."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    token = bearer(header)
    if token is None:
        raise HTTPException(
            401,
            "the Authorization header must be `Bearer TOKEN`",
            headers={"WWW-Authenticate": f'{REALM}, error="invalid_request"'},
        )
    return token


async def api_caller(request: Request, what: str = "", *, required: bool = True) -> Principal:
    """The principal of the request's Bearer token (charged one call); 401 without one when `required`."""
    token = bearer_token(request)
    principal = await run(service_of(request).caller, token, address(request))  # charges the address too
    if token is None and required:
        raise no_token(what or "this call")
    return principal


def as_json(msg: Message) -> dict[str, Any]:
    return MessageToDict(
        msg,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
        unquote_int64_if_possible=True,
    )
