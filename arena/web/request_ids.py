"""A request id per HTTP request: the caller's `X-Request-Id` when it is a plain token, else a new
one, set for everything the request runs (`arena.logs.REQUEST`: its log lines say `[req R]`, and a
challenge it queues carries it to the worker that plays the match) and sent back in the answer's
`X-Request-Id` header."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.logs import REQUEST, REQUEST_HEADER, request_id


class RequestIds:
    """Pure ASGI middleware (the context variable it sets reaches the endpoint and its threads)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next(
            (
                v.decode("latin-1")
                for k, v in scope.get("headers", ())
                if k.decode("latin-1").lower() == REQUEST_HEADER
            ),
            None,
        )
        rid = request_id(given)
        token = REQUEST.set(rid)

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", ()), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, marked)
        finally:
            REQUEST.reset(token)
