"""The HTML pages. Each one is complete without JavaScript; the replay viewer adds animation,
keyboard control and instant stepping when JavaScript runs, over the same markup.

A match that is not revealed yet (it or its duplicate twin still open) shows its seats, status and
commitment with HTTP 403 and the reason; its board, result and downloads appear once it is."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from arena.engine.cards import labels_in
from arena.ladder.queries import HISTORY_SHOWN
from arena.web.access import charge_token, is_admin, owner_key, owns
from arena.web.analysis import stored_analysis
from arena.web.api import (
    MatchId,
    StandingsAfter,
    StandingsBot,
    StandingsLimit,
    match_list,
    perspective_of,
    public_deal,
    public_json,
    standings_or_404,
)
from arena.web.cards import DECKS, card_name, card_svg, sprite, standalone
from arena.web.charts import rating_chart
from arena.web.data import WebData

router = APIRouter(include_in_schema=False)
PAGE = 50


def _render(request: Request, name: str, status_code: int = 200, **context: object) -> HTMLResponse:
    return request.app.state.templates.TemplateResponse(request, name, context, status_code=status_code)


def _data(request: Request) -> WebData:
    return request.app.state.data


@router.get("/", response_class=HTMLResponse)
def standings_page(
    request: Request,
    season: str | None = None,
    after: StandingsAfter = 0,
    limit: StandingsLimit = 100,
    bot: StandingsBot = "",
) -> HTMLResponse:
    """A page of the standings (100 rows), "better"/"worse" links by place, and a bot search that
    jumps to the page holding its row."""
    out = standings_or_404(_data(request), season or None, after, limit, bot)
    return _render(request, "standings.html", standings=out, title="Standings")


@router.get("/bots/{name}", response_class=HTMLResponse)
def bot_page(request: Request, name: str) -> HTMLResponse:
    bot = _data(request).bot(name)
    if bot is None:
        raise HTTPException(404, f"There is no bot named {name!r}.")
    return _render(
        request,
        "bot.html",
        bot=bot,
        chart=Markup(rating_chart(bot.history)),
        history_shown=HISTORY_SHOWN,
        title=bot.name,
    )


@router.post("/bots/{name}/logs", response_class=HTMLResponse)
def bot_logs_page(request: Request, name: str, token: Annotated[str, Form()] = "") -> HTMLResponse:
    data = _data(request)
    owner = data.bot_owner(name)
    if owner is None:
        raise HTTPException(404, f"There is no bot named {name!r}.")
    admin = is_admin(request, token)
    mine = admin or owns(request, owner, token)
    charge_token(request, token.strip() or None, "admin" if admin else owner_key(owner) if mine else None)
    if not mine:
        return _render(request, "logs.html", status_code=403, bot_name=name, logs=None, title=f"{name}: logs")
    logs = data.logs(name, unrevealed=admin)
    return _render(request, "logs.html", bot_name=name, logs=logs, title=f"{name}: logs")


@router.get("/matches", response_class=HTMLResponse)
def matches_page(
    request: Request,
    season: str = "",
    bot: str = "",
    verdict: str = "",
    after: Annotated[int | None, Query(ge=1, le=2**63 - 1)] = None,
) -> HTMLResponse:
    """A page of finished matches; "older" links carry the last id shown (keyset paging)."""
    data = _data(request)
    result = match_list(data, season, bot, verdict, limit=PAGE, after=after)
    return _render(
        request,
        "matches.html",
        result=result,
        after=after,
        filters={"season": season, "bot": bot, "verdict": verdict},
        seasons=data.seasons(),
        verdicts=data.verdict_names(),
        title="Matches",
    )


def _clamp(value: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, value))


@router.get("/matches/{match_id}", response_class=HTMLResponse)
def match_page(
    request: Request, match_id: MatchId, deal: int = 1, step: int = 0, view: str = "omni"
) -> HTMLResponse:
    """The viewer at one deal: the match's summary, the summary rows around the deal and that deal's
    steps only (the script loads other deals from the timeline route), so the page's size does not
    grow with the match. A negative `step` counts from the deal's end (-1: its last step)."""
    data = _data(request)
    match = data.match(match_id)
    if match is None:
        raise HTTPException(404, f"There is no match {match_id}.")
    if match.sealed:  # its public facts, and why the rest waits
        return _render(request, "match.html", 403, match=match, timeline=None, title=f"Match {match_id}")
    if not match.has_replay:
        return _render(request, "match.html", match=match, timeline=None, title=f"Match {match_id}")
    if view not in ("omni", "0", "1"):
        view = "omni"
    perspective = perspective_of(view)
    timeline = public_deal(request, match_id, perspective, deal, clamp=True)
    deal = max(1, timeline["deal"])
    steps = timeline["deals"][0]["steps"] if timeline["deals"] else []
    step = _clamp(len(steps) + step if step < 0 else step, 0, max(0, len(steps) - 1))
    blob = json.dumps(timeline, separators=(",", ":")).replace("<", "\\u003c")  # inert inside <script>
    return _render(
        request,
        "match.html",
        match=match,
        timeline=timeline,
        deal=deal,
        step=step,
        view=view,
        state=steps[step] if steps else None,
        timeline_json=Markup(blob),
        sprite=Markup(sprite(timeline["deck"])),
        analysis=stored_analysis(request, match_id),  # the solver's marks, once someone asked for them
        title=f"Match {match_id}",
    )


@router.get("/rules", response_class=HTMLResponse)
def rules_page(request: Request) -> HTMLResponse:
    """How Elfern is played and scored, for spectators (from docs/rules.md; the value tables are the
    engine's), with an anchor per term that the match and live pages link to."""
    from arena.engine.rules import VALUE_TABLES

    return _render(request, "rules.html", values=VALUE_TABLES, title="How Elfern is played and scored")


@router.get("/matches/{match_id}/replay.json")
def download_json(request: Request, match_id: MatchId) -> Response:
    body = json.dumps(public_json(request, match_id), indent=1).encode()
    return Response(
        body,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="match-{match_id}.json"'},
    )


@router.get("/cards/{deck}/{code}.svg")
def card_image(deck: str, code: str) -> Response:
    """One card face as an SVG file (for links and for people who want the art)."""
    code = code.upper()
    if deck not in DECKS or len(code) != 2 or code[0] not in "789TJQKA" or code[1] not in "CDHS":
        raise HTTPException(404, "No such card: use /cards/french/AS.svg or /cards/german/TH.svg.")
    return Response(
        standalone(code, deck), media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"}
    )


def register_template_helpers(templates) -> None:
    """Card drawing for the templates."""
    templates.env.globals["card"] = lambda code, deck="french", css="card": Markup(card_svg(code, deck, css))
    templates.env.globals["card_name"] = card_name
    templates.env.filters["card_labels"] = labels_in  # an illegal move's detail: labels, as the terminal
