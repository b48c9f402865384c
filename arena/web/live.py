"""Live spectating on the web: the home page's "now playing" list, the live match page and its
server-sent events, all driven by the management API's `ops_watch` (the same one-trick delay and
twin embargo as `WatchMatch` over gRPC: docs/web.md "Live").

`GET /live/{id}` renders the table as far as it is released (complete without JavaScript: it
refreshes itself every few seconds); `static/live.js` then follows `GET /api/matches/{id}/events`
(`text/event-stream`) and adds each trick in place. Once the match is over and revealed the page
shows the seed and salt, whether they match the deck commitment published before the match
(checked here, on the server), and turns into the replay viewer of `/matches/{id}`.

Streams are bounded: at most `PER_ADDRESS` at once per client address and `TOTAL` in all (then
429 with Retry-After), each opening is charged to the address's anonymous rate limit, a stream lasts
at most `STREAM_SECONDS` (the browser reconnects and resumes after the last event it got, by its
id), and it ends when the client goes away, or within a second of the server's stop (its `end`
frame is not final: the page looks again). No database connection is held between polls, and a
stream holds no copy of the match's events: they are kept once per process for all its watchers
(`arena.service.live_feed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import HTTPException
from fastapi.responses import HTMLResponse, StreamingResponse
from google.protobuf.json_format import MessageToDict
from markupsafe import Markup

from arena.engine.rules import Rules
from arena.proto import arena_pb2 as pb
from arena.replay.live_board import LiveBoard
from arena.service import ops_watch
from arena.service.core import Service
from arena.service.errors import NotFound, status_of
from arena.web.cards import sprite

log = logging.getLogger("arena.web.live")
router = APIRouter()

PER_ADDRESS = ops_watch.PER_ADDRESS  # concurrent event streams per client address
TOTAL = ops_watch.TOTAL  # concurrent event streams in all
STREAM_SECONDS = 600.0  # then the browser reconnects (EventSource does so by itself)
PING_SECONDS = 15.0  # a comment line while nothing happens, so proxies keep the stream open
RETRY_MS = 3000  # EventSource's reconnection delay
BATCH = 256  # events at most in one write
REFRESH_SECONDS = 5  # the page's own refresh, for browsers without JavaScript
NOW_PLAYING = 20  # matches listed on the home page
TRICK_DEALS = 5  # the Tricks list holds the tricks of the newest deals only (the Deals list has them all)


# ---- the service the web shares with gRPC ---------------------------------------------------------


def service_of(app: FastAPI) -> Service:
    """The app's `Service` (`app.state.service`, set by create_app); until it has one, one built lazily
    over the app's own store and admin token, so that the web and gRPC apply the same rules."""
    service = getattr(app.state, "service", None)
    if service is not None:
        return service
    service = getattr(app.state, "live_service", None)
    if service is None:
        service = Service(store=app.state.data.store, admin=getattr(app.state, "admin_token", None))
        app.state.live_service = service
    return service


def install(app: FastAPI) -> None:
    """Add the live routes and the template helper the home page's "now playing" list calls."""
    app.include_router(router)
    app.state.live_streams = ops_watch.Slots(PER_ADDRESS, TOTAL, kind="watch-web")
    templates = getattr(app.state, "templates", None)
    if templates is not None:
        templates.env.globals["live_now"] = lambda: now_playing(service_of(app))


# ---- what the pages show --------------------------------------------------------------------------


def now_playing(service: Service) -> list[dict[str, Any]]:
    """The matches being played now (ladder and challenges), newest first: public facts only."""
    from arena.service.ops_results import running_matches

    return [
        {
            "id": x.id,
            "players": list(x.players),
            "kind": x.kind,
            "season": x.season,
            "started_at": x.started_at,
        }
        for x in running_matches(service, NOW_PLAYING)
    ]


def verified(info: pb.MatchInfo) -> bool | None:
    """Whether the revealed seed and salt give the deck commitment published before the match; None
    while they are secret (or for a match recorded before commitments)."""
    from arena.engine import check_commitment

    if not info.revealed or not info.has_seed or not info.salt or not info.commitment:
        return None
    try:
        salt = bytes.fromhex(info.salt)
    except ValueError:
        return False
    return check_commitment(info.commitment, info.seed, f"m{info.id}", salt)


def status_data(info: pb.MatchInfo) -> dict[str, Any]:
    final = info.status == "failed" or (info.status == "done" and info.revealed)
    return {
        "match": {  # unset fields stay out (no "seed": 0 before the reveal), these two always in
            "status": info.status,
            "revealed": info.revealed,
            **MessageToDict(info, preserving_proto_field_name=True),
        },
        "final": final,
        "verified": verified(info),
        "viewer": f"/matches/{info.id}" if info.status == "done" and info.revealed else None,
    }


def event_id(ev: dict[str, Any]) -> str:
    deal, phase, trick = ops_watch.event_key(ev)
    return f"{deal}.{phase}.{trick}"


def _parse_id(text: str | None) -> tuple[int, int, int] | None:
    try:
        deal, phase, trick = (int(x) for x in (text or "").split("."))
    except ValueError:
        return None
    return (deal, phase, trick)


def event_dict(ev: pb.WatchEvent) -> tuple[str, dict[str, Any]]:
    kind = ev.WhichOneof("event")
    if kind == "status":
        return kind, status_data(ev.status)
    part = MessageToDict(
        getattr(ev, kind), preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return kind, {"kind": kind, **part}


def _rules(service: Service, match_id: int) -> tuple[Rules, str]:
    """The match's rules (hand size and scoring shape the live board) and its deck pictures."""
    from arena.engine.rules import RulesError
    from arena.store import models as m

    with service.store.read() as s:
        match = s.get(m.Match, match_id)
        pairs = list(match.rules or []) if match is not None else []
    try:
        rules = Rules.from_pairs(pairs)
    except RulesError:  # a record older than an option: the board's counts assume the defaults
        rules = Rules()
    return rules, rules.deck


def board_of(info: pb.MatchInfo, rules: Rules, deck: str) -> LiveBoard:
    return LiveBoard([p.rsplit("@", 1)[0] for p in info.players], rules, deck)


@router.get("/live/{match_id}", response_class=HTMLResponse, include_in_schema=False)
def live_page(request: Request, match_id: int) -> HTMLResponse:
    service = service_of(request.app)
    try:
        state, events = ops_watch.snapshot(service, match_id)
    except NotFound:
        raise HTTPException(404, f"There is no match {match_id}.") from None
    info = state.info
    data = status_data(info)
    deals: dict[int, dict[str, Any]] = {}
    for ev in events:
        row = deals.setdefault(ev["deal"], {"deal": ev["deal"], "dealer": None, "tricks": [], "end": None})
        if ev["kind"] == "deal":
            row["dealer"] = ev["dealer"]
        elif ev["kind"] == "trick":
            row["tricks"].append({**ev, "id": event_id(ev)})
        else:
            row["end"] = {**ev, "id": event_id(ev)}
    names = [p.rsplit("@", 1)[0] for p in info.players]
    rules, deck = _rules(service, match_id)
    board = board_of(info, rules, deck)
    for ev in events:
        board.feed(ev)
    shown = sorted(deals)
    for old in shown[:-TRICK_DEALS]:  # a long match's page stays small: its older tricks are in the replay
        deals[old] = {**deals[old], "tricks": []}
    return request.app.state.templates.TemplateResponse(
        request,
        "live.html",
        {
            "title": f"Live: match {match_id}",
            "info": info,
            "names": names,
            "deals": [deals[k] for k in shown],
            "trick_deals": TRICK_DEALS,
            "tricks_cut": len(shown) > TRICK_DEALS,
            "embargoed": state.embargoed and info.status != "failed",
            "final": data["final"],
            "verified": data["verified"],
            "viewer_url": data["viewer"],  # not "viewer": the base template has a helper of that name
            "deck": deck,
            "board": board.state() if events else None,
            "sprite": Markup(sprite(deck)),
            "table": {"seats": names, "deck": deck, "deals": []},
            "refresh": None if data["final"] else REFRESH_SECONDS,
            "last_id": event_id(events[-1]) if events else "",
        },
    )


# ---- the event stream ------------------------------------------------------------------------------


def _refuse(status: int, detail: str, retry_after: int | None = None) -> HTTPException:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return HTTPException(status, detail, headers=headers)


@router.get(
    "/api/matches/{match_id}/events",
    tags=["api"],
    summary="Follow a match live: server-sent events, one full trick behind the play",
    description=(
        "A `text/event-stream` of the match's public events, with the same delay and embargo as the "
        "gRPC `WatchMatch`: `status` (first, on every change, and last: `{match, final, verified, "
        "viewer}`), `deal`, `trick` (only once the next trick is complete) and `deal_end`, then `end`. "
        "Each of `deal`, `trick` and `deal_end` carries `board`: the table after it as a spectator may "
        "see it (the trick's cards, honours, lines, hand and stock sizes; hands as counts only). "
        "Each card event has an `id`; a reconnecting client (`Last-Event-ID`, or `?after=ID`) resumes "
        "after it. A match "
        "whose duplicate twin is not over streams only its status. At most 8 streams per address "
        "(429 with Retry-After beyond); a stream ends after 10 minutes (EventSource reconnects)."
    ),
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, 404: {}, 429: {}},
)
async def match_events(request: Request, match_id: int, after: str = "") -> StreamingResponse:
    service = service_of(request.app)
    address = request.client.host if request.client else "unknown"
    streams: ops_watch.Slots = request.app.state.live_streams
    try:
        await asyncio.to_thread(service.caller, None, address)  # the address's anonymous budget
        first = await asyncio.to_thread(ops_watch.load_state, service, match_id)  # 404 before any byte
    except Exception as exc:
        st = status_of(exc)
        if st is None:
            raise
        raise _refuse(st.http, st.message, st.retry_after) from None
    if not streams.enter(address):
        raise _refuse(429, f"too many live streams open from {address}; close one and retry", 5)
    resume = _parse_id(request.headers.get("last-event-id") or after)  # what the client already shows
    rules, deck = await asyncio.to_thread(_rules, service, match_id)
    board = board_of(first.info, rules, deck)
    return StreamingResponse(
        _stream(request, service, match_id, streams, address, resume, first, board),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _frame(kind: str, data: dict[str, Any], ident: str | None = None) -> bytes:
    head = f"id: {ident}\n" if ident else ""
    return f"{head}event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


async def _stream(
    request: Request,
    service: Service,
    match_id: int,
    streams: ops_watch.Slots,
    address: str,
    resume: tuple[int, int, int] | None,
    first: ops_watch.State,
    board: LiveBoard,
) -> AsyncIterator[bytes]:
    queue: asyncio.Queue[pb.WatchEvent | BaseException | None] = asyncio.Queue(maxsize=64)

    async def produce() -> None:
        try:
            async for ev in ops_watch.watch(service, match_id, first=first):
                await queue.put(ev)
            await queue.put(None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # handed to the stream, which names it
            await queue.put(exc)

    task = asyncio.create_task(produce())
    until = time.monotonic() + STREAM_SECONDS
    seen: tuple[str, bool, str] | None = None
    last: dict[str, Any] | None = None

    def frame_of(item: pb.WatchEvent) -> bytes:
        """The frame of one event (b"" for one the client already has)."""
        nonlocal seen, last, resume
        kind, data = event_dict(item)
        if kind == "status":
            now = (data["match"]["status"], data["match"]["revealed"], data["match"].get("started_at", ""))
            # a status that repeats the last one, or goes back to the queue, is a new attempt
            data["restart"] = seen is not None and (
                now == seen or (now[0] == "queued" and seen[0] == "running")
            )
            if seen is not None and (now != seen or data["restart"]):
                resume = None  # the match moved on (or restarted): skip nothing more
            if data["restart"]:
                board.reset()
            seen = now
            last = {k: data[k] for k in ("viewer", "verified", "final")}
            return _frame("status", data)
        key = ops_watch.event_key(data | {"kind": kind})
        board.feed(data)  # the table after this event, whether or not the client has the event
        if resume is not None and key <= resume:
            return b""  # the client has it from its previous connection
        return _frame(kind, data | {"board": board.state()}, event_id(data | {"kind": kind}))

    try:
        yield f"retry: {RETRY_MS}\n\n".encode()
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return  # the browser reconnects and resumes
            try:
                item = await asyncio.wait_for(queue.get(), timeout=min(PING_SECONDS, left))
            except TimeoutError:
                if await request.is_disconnected():
                    return
                yield b": ping\n\n"
                continue
            # what is already waiting goes out in one write: a finished match's hundred events cost
            # one pass through the server's middleware, not a hundred
            chunk: list[bytes] = []
            while True:
                if item is None:  # the watch ended: after a final status, or idle for too long
                    chunk.append(_frame("end", last or {"viewer": None, "verified": None, "final": False}))
                    yield b"".join(chunk)
                    return
                if isinstance(item, BaseException):
                    st = status_of(item)
                    if st is None:
                        log.exception("live stream of match %s", match_id, exc_info=item)
                    detail = {
                        "detail": st.message if st else "internal error",
                        "status": st.http if st else 500,
                    }
                    chunk.append(_frame("refused", detail))
                    yield b"".join(chunk)
                    return
                chunk.append(frame_of(item))
                if queue.empty() or len(chunk) >= BATCH:
                    break
                item = queue.get_nowait()
            if out := b"".join(chunk):
                yield out
    finally:
        task.cancel()
        with contextlib.suppress(BaseException):
            await task
        streams.leave(address)
