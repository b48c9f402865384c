"""The JSON API under /api: the same data as the pages, documented on /api/docs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response

from arena.web.data import WebData
from arena.web.records import RECORD_MEDIA_TYPE, match_record
from arena.web.schemas import BotOut, LogsOut, MatchOut, MatchPage, SeasonOut, StandingsOut
from arena.web.timeline import build_timeline
from arena.web.tokens import OwnerTokens

router = APIRouter(prefix="/api", tags=["api"])

View = Literal["omni", "0", "1"]


def _data(request: Request) -> WebData:
    return request.app.state.data


def perspective_of(view: str | None) -> int | None:
    """`omni` (or nothing) is the omniscient view; `0` / `1` is that seat's view."""
    return int(view) if view in ("0", "1") else None


@router.get("/seasons", response_model=list[SeasonOut], summary="Every season, newest first")
def seasons(request: Request) -> list[SeasonOut]:
    return _data(request).seasons()


@router.get(
    "/standings", response_model=StandingsOut, summary="A season's standings (default: the running one)"
)
def standings(request: Request, season: str | None = None) -> StandingsOut:
    out = _data(request).standings(season)
    if out is None:
        raise HTTPException(404, f"no season named {season!r}")
    return out


@router.get("/bots", response_model=list[str], summary="The names of all bots")
def bots(request: Request) -> list[str]:
    return _data(request).bot_names()


@router.get(
    "/bots/{name}", response_model=BotOut, summary="A bot: versions, rating history, matches, verdicts"
)
def bot(request: Request, name: str, recent: Annotated[int, Query(ge=1, le=200)] = 20) -> BotOut:
    out = _data(request).bot(name, recent=recent)
    if out is None:
        raise HTTPException(404, f"no bot named {name!r}")
    return out


def _bearer(authorization: str | None, x_owner_token: str | None) -> str | None:
    if x_owner_token:
        return x_owner_token
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:]
    return None


@router.get(
    "/bots/{name}/logs",
    response_model=LogsOut,
    summary="A bot's build and match logs; only for its owner",
    description="Send the owner's token as `Authorization: Bearer TOKEN` or `X-Owner-Token: TOKEN`.",
)
def bot_logs(
    request: Request,
    name: str,
    authorization: Annotated[str | None, Header()] = None,
    x_owner_token: Annotated[str | None, Header()] = None,
) -> LogsOut:
    data: WebData = _data(request)
    owner = data.bot_owner(name)
    if owner is None:
        raise HTTPException(404, f"no bot named {name!r}")
    token = _bearer(authorization, x_owner_token)
    tokens: OwnerTokens = request.app.state.tokens
    if not tokens.check(owner, token):
        raise HTTPException(
            401 if not token else 403,
            "these logs are shown only with the owner's token",
            headers={"WWW-Authenticate": "Bearer"},
        )
    logs = data.logs(name)
    assert logs is not None
    return logs


@router.get("/matches", response_model=MatchPage, summary="Finished matches, newest first, filtered")
def matches(
    request: Request,
    season: str | None = None,
    bot: str | None = None,
    verdict: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> MatchPage:
    return _data(request).matches(
        season=season or None, bot=bot or None, verdict=verdict or None, limit=limit, offset=offset
    )


@router.get("/matches/{match_id}", response_model=MatchOut, summary="One match: players, result, verdicts")
def match(request: Request, match_id: int) -> MatchOut:
    out = _data(request).match(match_id)
    if out is None:
        raise HTTPException(404, f"no match {match_id}")
    return out


def _record_bytes(request: Request, match_id: int) -> bytes:
    data = _data(request).replay_bytes(match_id)
    if data is None:
        raise HTTPException(404, f"match {match_id} has no replay (not played yet, or unknown)")
    return data


@router.get(
    "/matches/{match_id}/record",
    summary="The replay as elfern/1 JSON",
    response_description="An elfern/1 record; `arena replay verify` checks it",
)
def record_json(request: Request, match_id: int, download: bool = False) -> JSONResponse:
    record = match_record(_record_bytes(request, match_id))
    headers = {"Content-Disposition": f'attachment; filename="match-{match_id}.json"'} if download else None
    return JSONResponse(record, headers=headers)


@router.get(
    "/matches/{match_id}/record.bin",
    summary="The replay as the binary match record",
    response_class=Response,
    responses={200: {"content": {RECORD_MEDIA_TYPE: {}}}},
)
def record_binary(request: Request, match_id: int) -> Response:
    return Response(
        _record_bytes(request, match_id),
        media_type=RECORD_MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="match-{match_id}.elfrec"'},
    )


@router.get(
    "/matches/{match_id}/timeline",
    summary="The replay viewer's steps, re-simulated by the engine",
    description="`view=omni` shows every card; `view=0` or `view=1` shows only what that seat knew.",
)
def timeline(request: Request, match_id: int, view: View = "omni") -> dict[str, Any]:
    return build_timeline(match_record(_record_bytes(request, match_id)), perspective_of(view))
