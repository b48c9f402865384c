"""The organiser's page, /admin (an admin session only): every season with pause, resume, requeue
and recompute, voiding a match with a reason, suspending and reinstating owners, draining workers,
and the organiser's log. Each form posts to /admin/ACTION with the session's CSRF token and runs the
same operation as the gRPC call and the JSON API (`arena.service.ops_controls`), so the rules and
the log are the same whichever way the organiser acts."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from arena.proto import arena_pb2 as pb
from arena.service import ops_admin, ops_controls, ops_results
from arena.web import csrf
from arena.web.account import logged_in, viewer
from arena.web.calls import address, as_json, run, service_of
from arena.web.sessions import WebSession

router = APIRouter(include_in_schema=False)
Text = Annotated[str, Form(max_length=600)]
Action = Literal[
    "pause", "resume", "requeue", "recompute", "void", "suspend", "reinstate", "drain", "undrain"
]


def _require_admin(me: WebSession) -> None:
    if not me.principal.is_admin:
        raise HTTPException(403, "the organiser's page needs the admin token: log in with it")


def _context(request: Request, me: WebSession) -> dict[str, object]:
    service = service_of(request)
    seasons = [as_json(x) for x in ops_results.list_seasons(service).seasons]
    owners = [as_json(o) for o in ops_admin.list_owners(service, me.principal).owners]
    workers = [as_json(w) for w in ops_controls.list_workers(service, me.principal).workers]
    actions = [as_json(a) for a in ops_controls.list_actions(service, me.principal, 50).actions]
    return {"seasons": seasons, "owners": owners, "workers": workers, "actions": actions}


@router.get("/admin", response_class=HTMLResponse)
async def admin_page(request: Request, done: str = "") -> Response:
    found = await run(viewer, request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    me = await logged_in(request)
    _require_admin(me)
    context = await run(_context, request, me)
    return request.app.state.templates.TemplateResponse(
        request, "admin.html", {"me": me, "title": "Organiser", "done": done[:300], **context}
    )


def _act(request: Request, me: WebSession, action: Action, form: dict[str, str]) -> str:
    """Run one control; the line the page shows after it."""
    service, who, p = service_of(request), ops_controls.actor("web", address(request)), me.principal
    season, reason = form["season"], form["reason"]
    if action in ("pause", "resume"):
        ops_controls.pause(service, p, season, who, on=action == "pause")
        return f"season {season} {action}d"
    if action == "requeue":
        match_id = int(form["match_id"] or 0)
        got = ops_controls.requeue(service, p, pb.RequeueFailedRequest(season=season, match_id=match_id), who)
        return f"requeued {len(got.match_ids)} failed matches"
    if action == "recompute":
        done = ops_controls.recompute(service, p, season, who)
        return f"season {season}: {done.changed_entries} entries and {done.changed_ratings} rating changes corrected"
    if action == "void":
        match_id = int(form["match_id"] or 0)
        ops_controls.void(service, p, pb.VoidMatchRequest(match_id=match_id, reason=reason), who)
        return f"match {match_id} voided"
    if action in ("suspend", "reinstate"):
        ops_controls.suspend_owner(service, p, form["owner"], reason, who, on=action == "suspend")
        return (
            f"owner {form['owner']} {action}d"
            if action == "reinstate"
            else f"owner {form['owner']} suspended"
        )
    req = pb.DrainWorkerRequest(worker=form["worker"], reason=reason)
    ops_controls.drain(service, p, req, who, on=action == "drain")
    return f"worker {form['worker']} {'drained' if action == 'drain' else 'undrained'}"


@router.post("/admin/{action}")
async def admin_action(
    request: Request,
    action: Action,
    csrf_token: Annotated[str, Form(alias="csrf")] = "",
    season: Text = "",
    match_id: Annotated[str, Form(max_length=20, pattern=r"^\d*$")] = "",
    reason: Text = "",
    owner: Text = "",
    worker: Text = "",
) -> Response:
    me = await logged_in(request)
    csrf.check(me, csrf_token)
    _require_admin(me)
    form = {"season": season, "match_id": match_id, "reason": reason, "owner": owner, "worker": worker}
    line = await run(_act, request, me, action, form)
    from urllib.parse import quote

    return RedirectResponse(f"/admin?done={quote(line)}", status_code=303)
