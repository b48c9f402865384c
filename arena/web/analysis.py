"""The solver's annotations in the replay viewer: one route that analyses a finished match on demand,
and the stored result the match page shows (docs/analysis.md, docs/security.md).

Who may trigger it: a logged-in owner or the admin (a web session, with its CSRF token), charged to
the `analyse` rate budget of that principal. Only a finished match whose record is revealed (both
duplicate twins over) and holds at most `MAX_DEALS` deals. The analysis is made from the public record
only, with fixed options (`DEFAULT_SAMPLES`, seed 0), so it is the same whoever asks; it is stored
once, as `<arena home>/analyses/<match id>.json` (like bot bundles, a file under the arena's home), and
asking again only redirects to it. One analysis runs at a time per web process; another request
meanwhile gets 429 with Retry-After. Anyone who may see the match page sees its stored analysis.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from arena.access.ratelimit import RateLimited
from arena.analysis.annotate import DEFAULT_SAMPLES, annotate_record, mark
from arena.web import csrf
from arena.web.account import logged_in
from arena.web.api import MatchId, match_facts, public_json
from arena.web.calls import run, service_of

log = logging.getLogger(__name__)
router = APIRouter(include_in_schema=False)

MAX_DEALS = 30  # a longer match is for `arena replay analyse` on one's own machine
BUSY_RETRY_S = 30
_running = threading.Lock()  # one analysis at a time in this process


def analyses_dir(request: Request) -> Path:
    return Path(request.app.state.data.store.home) / "analyses"


def stored_analysis(request: Request, match_id: int) -> dict[str, Any] | None:
    """The stored analysis of a match, with each move's mark, or None. Call it for revealed matches only."""
    path = analyses_dir(request) / f"{int(match_id)}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for d in data.get("deals", []):
        for mv in d.get("moves", []):
            mv["mark"] = mark(mv)
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    tmp.replace(path)  # atomic: a reader sees the old state or the whole file


def _analyse(request: Request, match_id: int) -> None:
    """Compute and store the analysis unless it exists (runs in the threadpool)."""
    path = analyses_dir(request) / f"{match_id}.json"
    if path.exists():
        return
    record = public_json(request, match_id)  # 403 while sealed, 404 without a replay
    if len(record.get("deals", [])) > MAX_DEALS:
        raise HTTPException(
            422, f"match {match_id} has more than {MAX_DEALS} deals: analyse it with `arena replay analyse`"
        )
    if not _running.acquire(blocking=False):
        raise HTTPException(
            429, "another analysis is running; try again shortly", headers={"Retry-After": str(BUSY_RETRY_S)}
        )
    try:
        if not path.exists():
            log.info("analysing match %s", match_id)
            samples = getattr(request.app.state, "analysis_samples", DEFAULT_SAMPLES)  # tests use fewer
            _write(path, annotate_record(record, samples=samples, seed=0))
    finally:
        _running.release()


@router.post("/matches/{match_id}/analyse")
async def analyse_match(
    request: Request, match_id: MatchId, csrf_token: Annotated[str, Form(alias="csrf")] = ""
) -> Response:
    me = await logged_in(request)
    csrf.check(me, csrf_token)
    facts = await run(match_facts, request, match_id)
    if facts.status != "done":
        raise HTTPException(409, f"match {match_id} is not finished: it can be analysed once it is over")
    if not facts.revealed:
        raise HTTPException(403, facts.reason)
    if (analyses_dir(request) / f"{match_id}.json").exists():  # stored already: nothing to spend
        return RedirectResponse(f"/matches/{match_id}#analysis", status_code=303)
    try:
        service_of(request).limiter.hit("analyse", me.principal.key)
    except RateLimited as exc:
        raise HTTPException(429, str(exc), headers={"Retry-After": str(exc.retry_after)}) from None
    await run(_analyse, request, match_id)
    return RedirectResponse(f"/matches/{match_id}#analysis", status_code=303)
