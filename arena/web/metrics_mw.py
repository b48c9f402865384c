"""Web requests by route template and status: an ASGI middleware, counting while `arena.metrics` is on.

The route label is the template the request matched (`/matches/{match_id}`), never the raw path, or
a mount's prefix (`/static`), or `unmatched` (a 404 for a path no route knows): the label set is
the app's routes, however many URLs are asked for. The status label is the answer's HTTP status.
Pure ASGI (not Starlette's BaseHTTPMiddleware), so the live pages' event streams pass unbuffered.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena import metrics

UNMATCHED = "unmatched"


def route_of(scope: Scope) -> str:
    """The template of the route that answered, from the scope Starlette's router filled in."""
    route: Any = scope.get("route")
    if route is None:  # FastAPI's router leaves no "route" for a mount: its endpoint names it
        endpoint = scope.get("endpoint")
        mounts = [r for r in getattr(scope.get("app"), "routes", ()) if isinstance(r, Mount)]
        route = next((r for r in mounts if endpoint is not None and r.app is endpoint), None)
    if route is None:
        return UNMATCHED
    if isinstance(route, Mount):
        return route.path or "/"
    return str(getattr(route, "path", UNMATCHED))


class RequestMetrics:
    """Counts each HTTP request once its answer has started, with its route and status, and its time."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        d = metrics.defs()
        if scope["type"] != "http" or d is None:
            await self.app(scope, receive, send)
            return
        started, status = time.perf_counter(), 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            route = route_of(scope)
            d.WEB_REQUESTS.labels(route, str(status)).inc()
            d.WEB_SECONDS.labels(route).observe(time.perf_counter() - started)
