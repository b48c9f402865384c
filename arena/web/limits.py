"""A cap on every request body, enforced while it arrives (pure ASGI middleware).

FastAPI reads a JSON or form body whole into memory before the route runs; without a cap a single
huge POST would be held in memory. Here a declared Content-Length over the route's cap is answered
413 before a byte is read, and a chunked body is cut off with 413 as soon as it passes the cap. The
upload routes get the upload cap (plus the multipart framing); every other route 64 KiB.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SMALL = 64 * 1024  # bytes of any body but an upload
UPLOADS = ("/api/bots", "/me/upload")


class BodyLimit:
    def __init__(self, app: ASGIApp, upload_cap: Callable[[], int]) -> None:
        self.app = app
        self.upload_cap = upload_cap

    def cap_for(self, scope: Scope) -> int:
        from arena.web.uploads import OVERHEAD

        if scope.get("method") == "POST" and scope.get("path") in UPLOADS:
            # the upload reader (`uploads.py`) cuts off at the cap itself and refuses a declared length
            # over it; this is only the backstop, loose enough that the reader's message comes first
            return 2 * self.upload_cap() + OVERHEAD
        return SMALL

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.cap_for(scope)
        declared = _content_length(scope)
        if declared is not None and declared > cap:
            await _too_large(scope, cap)(scope, receive, send)
            return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise HTTPException(413, _message(cap), headers={"Connection": "close"})
            return message

        await self.app(scope, limited, send)


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            return int(value) if value.isdigit() else None
    return None


def _message(cap: int) -> str:
    if cap > SMALL:
        return f"the upload is over the {cap / (1024 * 1024):.0f} MiB cap; make the bundle smaller"
    return f"the request body is over {cap // 1024} KiB; this route takes small forms and JSON only"


def _too_large(scope: Scope, cap: int) -> ASGIApp:
    if str(scope.get("path", "")).startswith("/api"):
        return JSONResponse({"detail": _message(cap)}, status_code=413, headers={"Connection": "close"})
    return PlainTextResponse(_message(cap), status_code=413, headers={"Connection": "close"})
