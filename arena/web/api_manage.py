"""The management calls of the JSON API (`/api`, documented on /api/docs): the gRPC `Arena` service's
calls over HTTP, on the same operations (`arena.service.ops_*`), so the rules are written once.

Authentication is `Authorization: Bearer TOKEN` (an owner's `elf_` token, or the admin token); the
session cookie of the pages is never read here. Statuses: 401 no, malformed, wrong or revoked token
(with WWW-Authenticate), 403 someone else's bot or an admin-only call, 404, 409 a state that does not
allow it, 413 an upload over the cap, 415 not multipart, 422 a bad field (one line naming it), 429
with Retry-After.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from arena.access.roles import Principal
from arena.limits import ANCHORS, PAGE_TOKEN, RULES
from arena.proto import arena_pb2 as pb
from arena.proto import referee_pb2
from arena.service import ops_admin, ops_bots, ops_challenge, ops_results
from arena.service.quota import Admission
from arena.web.calls import api_caller, as_json, bearer_token, run, service_of
from arena.web.schemas import AnchorName, Name, Reason, RulePair
from arena.web.uploads import FILE_FIELD, admit, build, read_upload, refuse_declared

router = APIRouter(prefix="/api", tags=["manage"])


async def _required(request: Request) -> Principal:
    return await api_caller(request, f"{request.method} {request.url.path[:100]}")


async def _optional(request: Request) -> Principal:
    return await api_caller(request, required=False)


# resolved before the body is validated: no token is a 401 whatever the body says
Caller = Annotated[Principal, Depends(_required)]
Anyone = Annotated[Principal, Depends(_optional)]
PageSize = Annotated[int, Query(ge=0, le=100, description="rows per page; 0: 100 (at most 100)")]
PageToken = Annotated[
    str,
    Query(max_length=PAGE_TOKEN.most, description="empty: the first page; else an answer's next_page_token"),
]

UINT32 = 2**32 - 1
MAX_ID = 2**63 - 1

COMMON: dict[int | str, dict[str, Any]] = {
    401: {"description": "No token, a malformed Authorization header, or a wrong, rotated or revoked token"},
    403: {"description": "Someone else's bot, or a call for the admin only"},
    422: {"description": "A bad field: one line naming it"},
    429: {"description": "Over a rate limit: Retry-After says when to try again"},
}


class TimeControlIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    move_ms: Annotated[int, Field(ge=0, le=UINT32)] = 0
    bank_ms: Annotated[int, Field(ge=0, le=UINT32)] = 0
    startup_ms: Annotated[int, Field(ge=0, le=UINT32)] = 0

    def proto(self) -> referee_pb2.TimeControl:
        return referee_pb2.TimeControl(move_ms=self.move_ms, bank_ms=self.bank_ms, startup_ms=self.startup_ms)


class ChallengeIn(BaseModel):
    """An unrated match between one of your bots and any active bot."""

    model_config = ConfigDict(extra="forbid")
    my_bot: Name
    opponent: Name
    rules: Annotated[list[RulePair], Field(max_length=RULES)] = []
    deals: Annotated[
        int, Field(ge=0, le=UINT32, description="exactly this many deals; 0: as the rules say")
    ] = 0
    time_control: TimeControlIn = TimeControlIn()


class SeasonIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name
    rules: Annotated[list[RulePair], Field(max_length=RULES)] = []
    duplicate: bool = False
    time_control: TimeControlIn = TimeControlIn()
    anchors: Annotated[dict[AnchorName, float], Field(max_length=ANCHORS)] = {}  # NAME or NAME@V: its Elo
    pair_same_owner: bool = False


class ReasonIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reason: Reason = ""


def _json(msg: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(as_json(msg), status_code=status)


# ---- who am I ------------------------------------------------------------------------------------
@router.get("/me", summary="Who the token belongs to: role (owner or admin) and owner name", responses=COMMON)
async def me(request: Request, principal: Caller) -> dict[str, Any]:
    from arena.access.display import shown

    return {"role": principal.role, "owner": principal.owner, "token": shown(bearer_token(request))}


@router.get(
    "/me/bots",
    summary="Your bots (the admin: every bot), retired ones included, a page at a time in name order",
    responses=COMMON,
)
async def my_bots(
    request: Request, principal: Caller, limit: PageSize = 0, page_token: PageToken = ""
) -> JSONResponse:
    owner = "" if principal.is_admin else principal.owner or ""
    return _json(await run(ops_bots.list_bots, service_of(request), owner, True, limit, page_token))


# ---- bots ------------------------------------------------------------------------------------------
UPLOAD_DOC = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["name", FILE_FIELD],
                    "properties": {
                        "name": {"type": "string", "description": "the bot's ladder name"},
                        "format": {"type": "string", "enum": ["tar.gz", "zip"], "description": "optional"},
                        "owner": {"type": "string", "description": "admin only: submit for this owner"},
                        FILE_FIELD: {"type": "string", "format": "binary", "description": "the archive"},
                    },
                }
            }
        },
    }
}


@router.post(
    "/bots",
    summary="Submit a bot: a .tar.gz or .zip bundle (multipart), built in the sandbox",
    description="Fields `name`, `bundle` (the file), optional `format` (else from the file name or its "
    "first bytes) and, for the admin, `owner`. `name` may also be a query parameter, which lets the "
    "server refuse someone else's bot name before the upload. The upload budget, the owner's "
    "concurrent uploads (2) and disk quota are checked before the body is read (429, or 413 for a "
    "body that cannot fit the quota). The cap is enforced while the bytes "
    "arrive: a declared Content-Length over it is refused before reading, a longer body is cut off. "
    "The build waits for one of the server's build slots (one build per owner at once). "
    "201 for a new version, 200 when the same content was already submitted; the answer carries the "
    "build log. A version whose build failed is registered (200/201, `build_ok: false`).",
    responses={
        **COMMON,
        413: {"description": "Over the upload cap, or over the room left in the owner's disk quota"},
        415: {"description": "Not multipart"},
    },
    openapi_extra=UPLOAD_DOC,
)
async def submit(
    request: Request, principal: Caller, name: Annotated[str, Query(max_length=200)] = ""
) -> JSONResponse:
    service = service_of(request)
    refuse_declared(request, service.upload_cap)
    with await admit(request, principal, name) as admission:  # before the body: slot, quota, budget
        upload = await _receive(request, service.upload_cap, admission)
        name = name or upload.get("name")
        owner = upload.get("owner")
        await run(_check_submitter, service, principal, name, owner)
        done = await build(request, admission, principal, name, upload.path, owner)
    return _json(done, 201 if done.new else 200)


async def _receive(request: Request, cap: int, admission: Admission):
    from arena.web.calls import http_error

    try:
        return await read_upload(request, cap, admission)
    except Exception as exc:
        mapped = http_error(exc)
        if mapped is None:
            raise
        raise mapped from None


def _check_submitter(service, principal, name: str, owner: str) -> None:
    ops_bots.check_name(name)
    ops_bots.submitter(service, principal, name, owner)


@router.post("/bots/{name}/retire", summary="Retire one of your bots (it plays no more)", responses=COMMON)
async def retire(request: Request, principal: Caller, name: str) -> JSONResponse:
    return _json(await run(ops_bots.retire_bot, service_of(request), principal, name))


@router.get(
    "/bots/{name}/private-logs",
    summary="A bot's build logs and its own seats' match logs: its owner and the admin only",
    description="The owner's `elf_` token or the admin's as `Authorization: Bearer`. An owner sees a "
    "match's log once the match and its duplicate twin are over; the admin sees all.",
    responses=COMMON,
)
async def private_logs(
    request: Request,
    principal: Caller,
    name: str,
    match_id: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    limit: Annotated[int, Query(ge=0, le=200)] = 0,
) -> JSONResponse:
    return _json(await run(ops_bots.bot_logs, service_of(request), principal, name, match_id, limit))


# ---- challenges --------------------------------------------------------------------------------
@router.post(
    "/challenges",
    summary="Challenge any active bot with one of yours: an unrated match, queued for the workers",
    status_code=201,
    responses=COMMON,
)
async def challenge(request: Request, principal: Caller, body: ChallengeIn) -> JSONResponse:
    req = pb.ChallengeRequest(
        my_bot=body.my_bot,
        opponent=body.opponent,
        rules=body.rules,
        deals=body.deals,
        time_control=body.time_control.proto(),
    )
    return _json(await run(ops_challenge.challenge, service_of(request), principal, req), 201)


@router.get("/challenges", summary="Challenges (unrated matches), newest first; apart from ladder matches")
async def challenges(
    request: Request,
    _: Anyone,
    bot: Annotated[str, Query(max_length=200)] = "",
    status: Literal["", "queued", "running", "done", "failed"] = "",
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    after: Annotated[str, Query(max_length=20, description="a page's next_page_token")] = "",
) -> JSONResponse:
    req = pb.ListMatchesRequest(kind="challenge", bot=bot, status=status, limit=limit, page_token=after)
    return _json(await run(ops_results.list_matches, service_of(request), req))


# ---- the organiser ----------------------------------------------------------------------------
@router.post("/seasons", summary="Create a season (admin)", status_code=201, responses=COMMON)
async def create_season(request: Request, principal: Caller, body: SeasonIn) -> JSONResponse:
    req = pb.CreateSeasonRequest(
        name=body.name,
        rules=body.rules,
        duplicate=body.duplicate,
        time_control=body.time_control.proto(),
        anchors=body.anchors,
        pair_same_owner=body.pair_same_owner,
    )
    return _json(await run(ops_admin.create_season, service_of(request), principal, req), 201)


@router.post(
    "/seasons/{name}/{step}",
    summary="Start, freeze or close a season (admin)",
    responses={**COMMON, 404: {"description": "No such season"}, 409: {"description": "Not in that state"}},
)
async def season_step(
    request: Request, principal: Caller, name: str, step: Literal["start", "freeze", "close"]
) -> JSONResponse:
    return _json(await run(ops_admin.season_step, service_of(request), principal, name, step))


async def _suspend(
    request: Request, principal: Principal, name: str, body: ReasonIn | None, on: bool
) -> JSONResponse:
    fn = functools.partial(ops_admin.suspend, on=on)
    return _json(await run(fn, service_of(request), principal, name, body.reason if body else ""))


@router.post("/bots/{name}/suspend", summary="Suspend a bot, with a reason (admin)", responses=COMMON)
async def suspend(
    request: Request, principal: Caller, name: str, body: Annotated[ReasonIn | None, Body()] = None
) -> JSONResponse:
    return await _suspend(request, principal, name, body, True)


@router.post("/bots/{name}/reinstate", summary="Reinstate a suspended bot (admin)", responses=COMMON)
async def reinstate(
    request: Request, principal: Caller, name: str, body: Annotated[ReasonIn | None, Body()] = None
) -> JSONResponse:
    return await _suspend(request, principal, name, body, False)


@router.get(
    "/owners",
    summary="Every owner: name, token prefix, revoked, bot count, a page at a time in name order (admin)",
    responses=COMMON,
)
async def owners(
    request: Request, principal: Caller, limit: PageSize = 0, page_token: PageToken = ""
) -> JSONResponse:
    return _json(await run(ops_admin.list_owners, service_of(request), principal, limit, page_token))


class OwnerIn(BaseModel):
    name: Name = Field(description="letters, digits, '_', '.', '-'")


@router.post(
    "/owners",
    summary="Create an owner; the answer holds its API token, shown this once (admin)",
    status_code=201,
    responses=COMMON,
)
async def add_owner(request: Request, principal: Caller, body: OwnerIn) -> JSONResponse:
    # it carries a token: private, no-store (arena.web.access.PRIVATE_ROUTES)
    return _json(await run(ops_admin.manage_owner, service_of(request), principal, body.name, "add"), 201)


@router.post(
    "/owners/{name}/{step}",
    summary="Rotate (a new token, shown once) or revoke an owner's token (admin)",
    responses={**COMMON, 404: {"description": "No such owner"}},
)
async def owner_step(
    request: Request, principal: Caller, name: str, step: Literal["rotate", "revoke"]
) -> JSONResponse:
    return _json(await run(ops_admin.manage_owner, service_of(request), principal, name, step))
