"""The organiser's controls in the JSON API (`/api`, admin token only): the gRPC calls PauseSeason,
ResumeSeason, RequeueFailed, VoidMatch, RecomputeRatings, SuspendOwner, ReinstateOwner,
ListWorkers, DrainWorker, UndrainWorker and ListAdminActions over HTTP, on the same operations
(`arena.service.ops_controls`). Each answer is private (`arena.web.access.PRIVATE_ROUTES`); the
organiser's log names the caller as `web:admin@ADDRESS`."""

from __future__ import annotations

import functools
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from arena.access.roles import Principal
from arena.limits import LEASE_OWNER
from arena.proto import arena_pb2 as pb
from arena.service import ops_controls
from arena.web.calls import address, api_caller, as_json, run, service_of
from arena.web.schemas import Name, Reason

router = APIRouter(prefix="/api", tags=["organiser"])
MAX_ID = 2**63 - 1
COMMON: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, or a wrong one"},
    403: {"description": "Not the admin token"},
    404: {"description": "No such season, match, owner or drain"},
    409: {"description": "Not in a state that allows it"},
    422: {"description": "A bad field: one line naming it"},
}


async def _admin(request: Request) -> Principal:
    return await api_caller(request, f"{request.method} {request.url.path[:100]}")


Caller = Annotated[Principal, Depends(_admin)]


def _who(request: Request) -> str:
    return ops_controls.actor("web", address(request))


def _json(msg: Any) -> JSONResponse:
    return JSONResponse(as_json(msg))


class ReasonIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: Reason = ""


class VoidIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: Reason = Field(min_length=1, description="why; shown publicly with the match")


class RequeueIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match_id: Annotated[
        int, Field(ge=0, le=MAX_ID, description="one failed match; 0: every one of the season")
    ] = 0


Worker = Annotated[str, Path(max_length=LEASE_OWNER.most)]


@router.post(
    "/seasons/{name}/pause",
    summary="Pause a season: nothing of it starts, running matches finish (admin)",
    responses=COMMON,
)
async def pause(request: Request, principal: Caller, name: str) -> JSONResponse:
    fn = functools.partial(ops_controls.pause, on=True)
    return _json(await run(fn, service_of(request), principal, name, _who(request)))


@router.post("/seasons/{name}/resume", summary="Resume a paused season (admin)", responses=COMMON)
async def resume(request: Request, principal: Caller, name: str) -> JSONResponse:
    fn = functools.partial(ops_controls.pause, on=False)
    return _json(await run(fn, service_of(request), principal, name, _who(request)))


@router.post(
    "/seasons/{name}/requeue",
    summary="Put a season's failed matches (or one) back in the queue (admin)",
    responses=COMMON,
)
async def requeue(
    request: Request, principal: Caller, name: Name, body: Annotated[RequeueIn | None, Body()] = None
) -> JSONResponse:
    req = pb.RequeueFailedRequest(season=name, match_id=body.match_id if body else 0)
    return _json(await run(ops_controls.requeue, service_of(request), principal, req, _who(request)))


@router.post(
    "/seasons/{name}/recompute",
    summary="Recompute a season's ratings from its stored results (admin)",
    responses=COMMON,
)
async def recompute(request: Request, principal: Caller, name: str) -> JSONResponse:
    return _json(await run(ops_controls.recompute, service_of(request), principal, name, _who(request)))


@router.post(
    "/matches/{match_id}/void",
    summary="Void a played match with a reason, shown publicly; its season's ratings are recomputed (admin)",
    responses=COMMON,
)
async def void(request: Request, principal: Caller, match_id: int, body: VoidIn) -> JSONResponse:
    req = pb.VoidMatchRequest(match_id=match_id, reason=body.reason)
    return _json(await run(ops_controls.void, service_of(request), principal, req, _who(request)))


async def _owner(
    request: Request, principal: Principal, name: str, body: ReasonIn | None, on: bool
) -> JSONResponse:
    fn = functools.partial(ops_controls.suspend_owner, on=on)
    reason = body.reason if body else ""
    return _json(await run(fn, service_of(request), principal, name, reason, _who(request)))


@router.post(
    "/owners/{name}/suspend",
    summary="Suspend an owner: their bots stop being scheduled; their token reads only (admin)",
    responses=COMMON,
)
async def suspend_owner(
    request: Request, principal: Caller, name: str, body: Annotated[ReasonIn | None, Body()] = None
) -> JSONResponse:
    return await _owner(request, principal, name, body, True)


@router.post("/owners/{name}/reinstate", summary="Reinstate a suspended owner (admin)", responses=COMMON)
async def reinstate_owner(
    request: Request, principal: Caller, name: str, body: Annotated[ReasonIn | None, Body()] = None
) -> JSONResponse:
    return await _owner(request, principal, name, body, False)


@router.get("/workers", summary="Workers holding matches now, and the drains (admin)", responses=COMMON)
async def workers(request: Request, principal: Caller) -> JSONResponse:
    return _json(await run(ops_controls.list_workers, service_of(request), principal))


async def _drain(
    request: Request, principal: Principal, worker: str, body: ReasonIn | None, on: bool
) -> JSONResponse:
    req = pb.DrainWorkerRequest(worker=worker, reason=body.reason if body else "")
    fn = functools.partial(ops_controls.drain, on=on)
    return _json(await run(fn, service_of(request), principal, req, _who(request)))


@router.post(
    "/workers/{worker}/drain",
    summary="Drain a worker: it finishes its matches and takes no new one (admin)",
    responses=COMMON,
)
async def drain(
    request: Request, principal: Caller, worker: Worker, body: Annotated[ReasonIn | None, Body()] = None
) -> JSONResponse:
    return await _drain(request, principal, worker, body, True)


@router.post(
    "/workers/{worker}/undrain", summary="Let a drained worker take matches again (admin)", responses=COMMON
)
async def undrain(
    request: Request, principal: Caller, worker: Worker, body: Annotated[ReasonIn | None, Body()] = None
) -> JSONResponse:
    return await _drain(request, principal, worker, body, False)


@router.get("/admin/actions", summary="The organiser's log, newest first (admin)", responses=COMMON)
async def actions(
    request: Request, principal: Caller, limit: Annotated[int, Query(ge=0, le=200)] = 0
) -> JSONResponse:
    return _json(await run(ops_controls.list_actions, service_of(request), principal, limit))
