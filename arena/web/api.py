"""The JSON API under /api: the same data as the pages, documented on /api/docs.

Public routes serve only what `arena.web.data` and `arena.web.records` make public: a match's seed,
salt, result and replay once it and its duplicate twin are over, public records without the bots'
output. `/private-record.bin` and `/logs` need an owner's or the admin's token (docs/security.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Header, HTTPException, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from arena.web.access import charge_token, is_admin, owned_seats, owner_key, owns, presented, refuse
from arena.web.data import WebData
from arena.web.deals import ROWS
from arena.web.records import (
    RECORD_MEDIA_TYPE,
    deal_of,
    labelled_record,
    match_outline,
    match_timeline,
    private_bytes,
    public_bytes,
)
from arena.web.reveal import MatchFacts
from arena.web.schemas import BotOut, LogsOut, MatchOut, MatchPage, SeasonOut, StandingsOut

router = APIRouter(prefix="/api", tags=["api"])

View = Literal["omni", "0", "1"]
MatchId = Annotated[int, Path(ge=0, le=2**63 - 1, description="the match's number")]  # a store integer
NAMES_PAGE = 1000  # names per page of /api/bots (about 12 KB)
WHOLE_DEALS = 50  # a whole timeline beyond this many deals would pass 1 MB (a deal's is up to ~16 KB)


def _data(request: Request) -> WebData:
    return request.app.state.data


def perspective_of(view: str | None) -> int | None:
    """`omni` (or nothing) is the omniscient view; `0` / `1` is that seat's view."""
    return int(view) if view in ("0", "1") else None


@router.get("/seasons", response_model=list[SeasonOut], summary="Every season, newest first")
def seasons(request: Request) -> list[SeasonOut]:
    return _data(request).seasons()


StandingsAfter = Annotated[
    int,
    Query(ge=0, le=2**31 - 1, description="rows of the table to skip: a page's `next_after` (0: the top)"),
]
StandingsLimit = Annotated[int, Query(ge=1, le=500, description="rows a page holds (at most 500)")]
StandingsBot = Annotated[
    str, Query(max_length=200, description="a bot's name (or name@version): the page holding its row")
]


@router.get(
    "/standings",
    response_model=StandingsOut,
    summary="A page of a season's standings (default: the running season, its top 100 rows)",
    description="Pages by place: pass a page's `next_after` as `after` for the next rows, or `bot` for "
    "the page holding that bot's row (`focus`). `total` counts the whole table's rated rows.",
    responses={404: {"description": "No such season, or `bot` has no row in its standings"}},
)
def standings(
    request: Request,
    season: str | None = None,
    after: StandingsAfter = 0,
    limit: StandingsLimit = 100,
    bot: StandingsBot = "",
) -> StandingsOut:
    return standings_or_404(_data(request), season, after, limit, bot)


def standings_or_404(data: WebData, season: str | None, after: int, limit: int, bot: str) -> StandingsOut:
    """The standings page, or 404 naming the unknown season or bot (the page and the API alike)."""
    from arena.ladder.standings_page import NoSuchRow

    try:
        out = data.standings(season, after=after, limit=limit, bot=bot.strip())
    except NoSuchRow as exc:
        raise HTTPException(404, str(exc)) from None
    if out is None:
        raise HTTPException(404, f"no season named {season!r}")
    return out


@router.get(
    "/bots",
    response_model=list[str],
    summary="Bot names in name order, a page at a time",
    description=f"At most `limit` names (default and most {NAMES_PAGE}) after the name `after`. When more "
    'follow, the `Link` header gives the next page (`</api/bots?after=NAME&limit=N>; rel="next"`).',
)
def bots(
    request: Request,
    response: Response,
    after: Annotated[str, Query(max_length=64, description="the last name of the page before")] = "",
    limit: Annotated[int, Query(ge=1, le=NAMES_PAGE)] = NAMES_PAGE,
) -> list[str]:
    names = _data(request).bot_names(after=after, limit=limit + 1)
    if len(names) > limit:
        names = names[:limit]
        response.headers["Link"] = (
            f'</api/bots?{urlencode({"after": names[-1], "limit": limit})}>; rel="next"'
        )
    return names


@router.get(
    "/bots/{name}", response_model=BotOut, summary="A bot: versions, rating history, matches, verdicts"
)
def bot(request: Request, name: str, recent: Annotated[int, Query(ge=1, le=200)] = 20) -> BotOut:
    out = _data(request).bot(name, recent=recent)
    if out is None:
        raise HTTPException(404, f"no bot named {name!r}")
    return out


@router.get(
    "/bots/{name}/logs",
    response_model=LogsOut,
    summary="A bot's build and match logs; only for its owner and the admin",
    description="Send the owner's (or the admin's) token as `Authorization: Bearer TOKEN` or "
    "`X-Owner-Token: TOKEN`. An owner sees a match's logs once it and its duplicate twin are over. "
    "A token that is no one's costs one of the address's anonymous calls (429 with Retry-After "
    "over the budget).",
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
    token = presented(authorization, x_owner_token)
    admin = is_admin(request, token)
    mine = admin or owns(request, owner, token)
    charge_token(request, token, "admin" if admin else owner_key(owner) if mine else None)
    if not mine:
        raise refuse(token, f"the logs of {name}")
    logs = data.logs(name, unrevealed=admin)
    if logs is None:  # deleted between the two reads
        raise HTTPException(404, f"no bot named {name!r}")
    return logs


@router.get(
    "/matches",
    response_model=MatchPage,
    summary="Finished matches, newest first, filtered (challenges only with kind=challenge)",
    description="Pages by keyset: pass a page's `next_after` as `after` for the next (older) page. "
    "`total` counts the matches that fit up to 1000 (`total_capped` beyond). `verdict` is one of "
    "the verdict names or VOID, and lists revealed matches only.",
    responses={422: {"description": "An unknown verdict or a malformed `after`"}},
)
def matches(
    request: Request,
    season: str | None = None,
    bot: str | None = None,
    verdict: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    after: Annotated[int | None, Query(ge=1, le=2**63 - 1, description="a page's next_after")] = None,
    kind: Literal["ladder", "final", "compare", "challenge"] | None = None,
) -> MatchPage:
    return match_list(_data(request), season, bot, verdict, limit=limit, after=after, kind=kind)


def match_list(
    data: WebData,
    season: str | None,
    bot: str | None,
    verdict: str | None,
    *,
    limit: int,
    after: int | None,
    kind: str | None = None,
) -> MatchPage:
    """The match list for the API and the page; an unknown verdict is a 422 naming the choices."""
    from arena.ladder.queries import BadFilter

    try:
        return data.matches(
            season=season or None,
            bot=bot or None,
            verdict=verdict or None,
            limit=limit,
            after=after,
            kind=kind,
        )
    except BadFilter as exc:
        raise HTTPException(422, str(exc)) from None


@router.get(
    "/matches/{match_id}",
    response_model=MatchOut,
    summary="One match: players, status, commitment; once revealed also result, seed and salt",
)
def match(request: Request, match_id: MatchId) -> MatchOut:
    out = _data(request).match(match_id)
    if out is None:
        raise HTTPException(404, f"no match {match_id}")
    return out


def match_facts(request: Request, match_id: int) -> MatchFacts:
    facts = _data(request).match_facts(match_id)
    if facts is None:
        raise HTTPException(404, f"no match {match_id}")
    return facts


def stored_record(request: Request, facts: MatchFacts) -> bytes:
    """The stored (private) bytes of a match's replay; 404 when it has none."""
    data = _data(request).replay_bytes(facts.id)
    if data is None:
        raise HTTPException(404, f"match {facts.id} has no replay")
    return data


def revealed_record(request: Request, match_id: int) -> tuple[MatchFacts, bytes]:
    """The stored (private) bytes of a revealed match's replay; 403 with the reason while it is not
    revealed. Callers serve only what they make public from it."""
    facts = match_facts(request, match_id)
    if not facts.revealed:
        raise HTTPException(403, facts.reason)
    return facts, stored_record(request, facts)


def public_record_of(request: Request, match_id: int) -> tuple[MatchFacts, bytes]:
    """The public record of a revealed match; 403 with the reason while it is not revealed."""
    facts, stored = revealed_record(request, match_id)
    return facts, public_bytes(stored, facts.seats)


def public_timeline(request: Request, match_id: int, perspective: int | None) -> dict[str, Any]:
    """The viewer's timeline of a revealed match's public record (one walk of the record); 413 for a
    match over `WHOLE_DEALS` deals, whose timeline is served one deal at a time."""
    facts, stored = revealed_record(request, match_id)
    count = match_outline(stored, facts.seats)[1].count
    if count > WHOLE_DEALS:
        raise HTTPException(
            413,
            f"match {match_id} has {count} deals: its whole timeline is served up to {WHOLE_DEALS} deals "
            f"(about 1 MB); ask for one deal with ?deal=1 to ?deal={count}, or download the record "
            f"(/api/matches/{match_id}/record.bin)",
        )
    return match_timeline(public_bytes(stored, facts.seats), facts.seats, perspective)


def public_deal(
    request: Request, match_id: int, perspective: int | None, deal: int, clamp: bool = False
) -> dict[str, Any]:
    """One deal's timeline of a revealed match's public record (`arena.web.records.deal_of`), under
    the same reveal rule as the whole one; `clamp` takes the nearest deal the match has."""
    facts, stored = revealed_record(request, match_id)
    if clamp:
        deal = max(1, min(deal, match_outline(stored, facts.seats)[1].count))
    return deal_of(stored, facts.seats, perspective, deal)


def public_json(request: Request, match_id: int) -> dict[str, Any]:
    """The public elfern/1 record of a revealed match, seats named as registered."""
    facts, data = public_record_of(request, match_id)
    return labelled_record(data, facts.seats)


@router.get(
    "/matches/{match_id}/record",
    summary="The replay as elfern/1 JSON",
    response_description="An elfern/1 record; `arena replay verify` checks it",
    responses={403: {"description": "The match or its duplicate twin is not over yet"}},
)
def record_json(request: Request, match_id: MatchId, download: bool = False) -> JSONResponse:
    record = public_json(request, match_id)
    headers = {"Content-Disposition": f'attachment; filename="match-{match_id}.json"'} if download else None
    return JSONResponse(record, headers=headers)


@router.get(
    "/matches/{match_id}/record.bin",
    summary="The public binary match record (no bot output, seats as registered)",
    response_class=Response,
    responses={
        200: {"content": {RECORD_MEDIA_TYPE: {}}},
        403: {"description": "The match or its duplicate twin is not over yet"},
    },
)
def record_binary(request: Request, match_id: MatchId) -> Response:
    _, data = public_record_of(request, match_id)
    return Response(
        data,
        media_type=RECORD_MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="match-{match_id}.elfrec"'},
    )


@router.get(
    "/matches/{match_id}/private-record.bin",
    summary="The binary record with the bots' logs: an owner's own seat, or everything for the admin",
    description="Send `Authorization: Bearer TOKEN` (or `X-Owner-Token`). The owner of a seat's bot gets "
    "that seat's logs, private verdict details and self-reported name, never the opponent's, once the "
    "match and its duplicate twin are over; the admin gets the whole record at any time. A token that "
    "is no one's costs one of the address's anonymous calls (429 with Retry-After over the budget).",
    response_class=Response,
    responses={
        200: {"content": {RECORD_MEDIA_TYPE: {}}},
        401: {"description": "No token"},
        403: {"description": "Not this match's owner's or the admin's token, or the match is not revealed"},
    },
)
def private_record(
    request: Request,
    match_id: MatchId,
    authorization: Annotated[str | None, Header()] = None,
    x_owner_token: Annotated[str | None, Header()] = None,
) -> Response:
    facts = match_facts(request, match_id)
    token = presented(authorization, x_owner_token)
    owners = [owner for _, _, owner in facts.seats]
    if is_admin(request, token):
        keep = frozenset((0, 1))
        charge_token(request, token, "admin")
    else:
        keep = owned_seats(request, owners, token)
        charge_token(request, token, owner_key(owners[min(keep)]) if keep else None)
        if not keep:
            raise refuse(token, f"the private record of match {match_id}")
        if not facts.revealed:
            raise HTTPException(403, facts.reason)
    data = private_bytes(stored_record(request, facts), facts.seats, keep)
    return Response(
        data,
        media_type=RECORD_MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="match-{match_id}-private.elfrec"'},
    )


@router.get(
    "/matches/{match_id}/timeline",
    summary="The replay viewer's steps, re-simulated by the engine: one deal, or the whole match",
    description="`view=omni` shows every card; `view=0` or `view=1` shows only what that seat knew. "
    "With `deal=K` the answer holds deal K only in `deals`, with `deal`, `deal_count` and `rows` (the "
    f"summary rows of up to {ROWS} deals around K); the viewer loads deals so. Without it, the whole "
    f"match, for a match of at most {WHOLE_DEALS} deals (413 beyond).",
    responses={
        403: {"description": "The match or its duplicate twin is not over yet"},
        404: {"description": "No such match, no replay, or no such deal"},
        413: {"description": f"The whole timeline of a match over {WHOLE_DEALS} deals: ask per deal"},
    },
)
def timeline(
    request: Request,
    match_id: MatchId,
    view: View = "omni",
    deal: Annotated[int | None, Query(ge=1, le=2**31, description="one deal (1-based)")] = None,
) -> dict[str, Any]:
    if deal is not None:
        return public_deal(request, match_id, perspective_of(view), deal)
    return public_timeline(request, match_id, perspective_of(view))
