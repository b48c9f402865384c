"""Wiring of the accounts and the management API into the app: one call from `create_app`.

It adds the session table, the body-size cap, the one-line 422 for a bad field, the template helpers
(who is logged in, the bots a challenge may use) and the two routers: the pages (`account.py`)
and the JSON calls (`api_manage.py`).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from arena.web import account, admin_pages, api_controls, api_manage
from arena.web.limits import BodyLimit
from arena.web.sessions import Sessions


def field_error(exc: RequestValidationError) -> str:
    """The first bad field of a request as one line: where it is and what is wrong with it."""
    errors = exc.errors()
    if not errors:
        return "the request is malformed"
    first = errors[0]
    loc = [str(x) for x in first.get("loc", ())]
    where = loc[0] if loc else "request"
    name = ".".join(loc[1:]) or ("body" if where == "body" else where)
    msg = str(first.get("msg", "is not valid"))[:200]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{name} ({where}): {msg}{more}"


def install(app: FastAPI) -> None:
    app.state.sessions = Sessions()
    app.add_middleware(BodyLimit, upload_cap=lambda: app.state.service.upload_cap)
    templates = app.state.templates
    templates.env.globals["viewer"] = account.viewer
    templates.env.globals["challenge_choices"] = account.challenge_choices

    @app.exception_handler(RequestValidationError)
    async def _bad_field(request: Request, exc: RequestValidationError) -> Response:
        line = field_error(exc)
        if request.url.path.startswith("/api"):
            return JSONResponse({"detail": line}, status_code=422)
        return templates.TemplateResponse(
            request, "error.html", {"status": 422, "detail": line}, status_code=422
        )

    app.include_router(
        api_controls.router
    )  # first: its /seasons/NAME/pause beside api_manage's /seasons/NAME/STEP
    app.include_router(api_manage.router)
    app.include_router(admin_pages.router)
    app.include_router(account.router)
