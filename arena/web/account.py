"""The owner's pages: log in and out with a token, My bots (versions, build logs, verdicts, private
match logs, retire), uploading a bundle, and challenging a bot from its page; the challenges list.

Every action goes through the management operations (`arena.service.ops_*`) with the session's
principal, so the web enforces exactly the rules gRPC does. Every form carries a CSRF token
(`arena.web.csrf`); every POST without a valid one is a 403.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.access.display import shown
from arena.access.ratelimit import RateLimited
from arena.proto import arena_pb2 as pb
from arena.service import ops_bots, ops_challenge, ops_results
from arena.web import csrf
from arena.web.calls import address, as_json, http_error, run, service_of
from arena.web.sessions import COOKIE, LIFETIME, Sessions, WebSession, clear_cookie, set_cookie, still_valid
from arena.web.uploads import admit, build, read_upload

router = APIRouter(include_in_schema=False)
Field = Annotated[str, Form(max_length=4096)]


def _render(request: Request, template: str, status_code: int = 200, **context: object) -> HTMLResponse:
    return request.app.state.templates.TemplateResponse(request, template, context, status_code=status_code)


def sessions_of(request: Request) -> Sessions:
    return request.app.state.sessions


def viewer(request: Request) -> WebSession | None:
    """The request's live session (None when logged out); a rotated or revoked token ends it here."""
    if hasattr(request.state, "viewer"):  # looked up already in this request
        cached: WebSession | None = request.state.viewer
        return cached
    sid = request.cookies.get(COOKIE)
    found = sessions_of(request).get(sid)
    if found is not None and not still_valid(service_of(request).store, found):
        sessions_of(request).delete(sid)
        found = None
    request.state.viewer = found
    return found


async def logged_in(request: Request) -> WebSession:
    """The session, charged one call against its owner's rate limit; 401 when there is none."""
    found = await run(viewer, request)
    if found is None:
        raise HTTPException(401, "log in with your owner token first (the Log in link at the top)")
    await run(service_of(request).limiter.hit, "call", found.principal.key)
    return found


# ---- log in and out ---------------------------------------------------------------------------
def _login_page(request: Request, status: int = 200, error: str = "", retry: int | None = None) -> Response:
    token, fresh = csrf.login_token(request)
    page = _render(request, "login.html", status, error=error, title="Log in", csrf_login=token)
    if fresh:
        set_cookie(page, request, csrf.LOGIN_COOKIE, token, csrf.LOGIN_AGE)
    if status == 401:
        page.headers["WWW-Authenticate"] = 'Bearer realm="elfern-arena"'
    if retry is not None:
        page.headers["Retry-After"] = str(retry)
    return page


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request) -> Response:
    return _login_page(request)


@router.post("/login", response_class=HTMLResponse)
async def login(
    request: Request, token: Field = "", csrf_token: Annotated[str, Form(alias="csrf")] = ""
) -> Response:
    service = service_of(request)
    try:
        service.limiter.hit("login", f"addr:{address(request)}")
    except RateLimited as exc:
        return _login_page(
            request, 429, f"Too many log-in attempts; try again in {exc.retry_after} s.", exc.retry_after
        )
    csrf.check_login(request, csrf_token)
    token = token.strip()
    if not token:
        return _login_page(request, 422, "Paste your token (it starts with elf_) into the field.")
    try:
        principal = await run(service.caller, token, address(request))
    except HTTPException as exc:
        retry = int(exc.headers["Retry-After"]) if exc.headers and "Retry-After" in exc.headers else None
        return _login_page(request, exc.status_code, str(exc.detail), retry)
    made = sessions_of(request).create(principal, token, shown(token))
    response = RedirectResponse("/me", status_code=303)
    set_cookie(response, request, COOKIE, made.id, int(LIFETIME))
    clear_cookie(response, request, csrf.LOGIN_COOKIE)
    return response


@router.post("/logout")
async def logout(request: Request, csrf_token: Annotated[str, Form(alias="csrf")] = "") -> Response:
    found = await run(viewer, request)
    if found is None:
        raise HTTPException(401, "you are not logged in")
    csrf.check(found, csrf_token)
    sessions_of(request).delete(request.cookies.get(COOKIE))
    response = RedirectResponse("/", status_code=303)
    clear_cookie(response, request, COOKIE)
    return response


# ---- My bots ------------------------------------------------------------------------------------
def _my_bots(request: Request, me: WebSession) -> dict[str, Any]:
    service = service_of(request)
    owner = "" if me.principal.is_admin else me.principal.owner or ""
    listed = ops_bots.list_bots(service, owner, include_retired=True).bots[:100]
    bots = []
    for info in listed:
        bot = as_json(ops_bots.get_bot(service, info.name, recent=10))
        logs = as_json(ops_bots.bot_logs(service, me.principal, info.name, limit=10))
        bots.append({"bot": bot, "logs": logs})
    names = {b["bot"]["name"] for b in bots}
    mine = ops_results.list_matches(service, pb.ListMatchesRequest(kind="challenge", limit=500)).matches
    challenges = [
        as_json(x)
        for x in mine
        if x.requested_by == me.principal.name or any(p.split("@")[0] in names for p in x.players)
    ][:50]
    return {"bots": bots, "challenges": challenges}


@router.get("/me", response_class=HTMLResponse)
async def my_page(request: Request) -> Response:
    found = await run(viewer, request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    await run(service_of(request).limiter.hit, "call", found.principal.key)
    context = await run(_my_bots, request, found)
    return _render(
        request, "me.html", me=found, title="My bots", cap=service_of(request).upload_cap, **context
    )


@router.post("/me/upload", response_class=HTMLResponse)
async def upload(request: Request) -> Response:
    me = await logged_in(request)
    service = service_of(request)
    try:
        with await admit(request, me.principal) as admission:  # before the body: slot, quota, budget
            got = await read_upload(request, service.upload_cap, admission)
            csrf.check(me, got.get(csrf.FIELD))
            name = got.get("name").strip()
            done = await build(request, admission, me.principal, name, got.path)
    except HTTPException:
        raise
    except Exception as exc:
        mapped = http_error(exc)
        if mapped is None:
            raise
        raise mapped from None
    return _render(
        request,
        "uploaded.html",
        201 if done.new else 200,
        me=me,
        name=name,
        done=as_json(done),
        size=got.size,
        title=f"{name}: uploaded",
    )


@router.post("/me/bots/{name}/retire")
async def retire(
    request: Request, name: str, csrf_token: Annotated[str, Form(alias="csrf")] = ""
) -> Response:
    me = await logged_in(request)
    csrf.check(me, csrf_token)
    await run(ops_bots.retire_bot, service_of(request), me.principal, name)
    return RedirectResponse("/me", status_code=303)


# ---- challenges ---------------------------------------------------------------------------------
@router.post("/bots/{name}/challenge")
async def challenge(
    request: Request,
    name: str,
    my_bot: Field = "",
    deals: Annotated[int, Form(ge=0, le=200)] = 0,
    csrf_token: Annotated[str, Form(alias="csrf")] = "",
) -> Response:
    me = await logged_in(request)
    csrf.check(me, csrf_token)
    req = pb.ChallengeRequest(my_bot=my_bot, opponent=name, deals=deals)
    made = await run(ops_challenge.challenge, service_of(request), me.principal, req)
    return RedirectResponse(f"/live/{made.match.id}", status_code=303)  # followed live, then the viewer


@router.get("/challenges", response_class=HTMLResponse)
async def challenges_page(request: Request, bot: str = "") -> Response:
    req = pb.ListMatchesRequest(kind="challenge", bot=bot[:200], limit=200)
    found = await run(ops_results.list_matches, service_of(request), req)
    rows = [as_json(x) for x in found.matches]
    return _render(
        request, "challenges.html", rows=rows, total=found.total, bot=bot[:200], title="Challenges"
    )


def challenge_choices(request: Request) -> list[str]:
    """The logged-in owner's bots that can play a challenge (for the form on a bot's page)."""
    me = viewer(request)
    if me is None:
        return []
    owner = "" if me.principal.is_admin else me.principal.owner or ""
    bots = ops_bots.list_bots(service_of(request), owner).bots
    return [b.name for b in bots if b.state == "active"]
