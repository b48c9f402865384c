"""Watching a match live, one full trick behind, for everyone (spectators, owners and the admin alike).

A trick is released only once the next trick is complete, or the match is over: a spectator never
learns a card before both seats could act on it, and so cannot tip off a bot. Hands, drawn cards
and the stock never appear. A match whose duplicate twin (same decks) is still to be played streams
only its status: its cards would tell the twin's hands. The events come from the worker's live file
(`arena.workers.live`) while a match plays, and from the public record once it is revealed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import select

from arena.proto import arena_pb2 as pb
from arena.service.core import Service
from arena.service.errors import NotFound
from arena.store import models as m
from arena.workers.live import live_path, read_events

POLL = 0.25  # seconds between looks at a running match
OVER = ("done", "failed")


def twins_pending(s: Any, match: m.Match) -> bool:
    """True while another match dealing the same cards (same season and pair) is not over."""
    if match.season_id is None or match.pair is None:
        return False
    others = s.scalars(
        select(m.Match.status).where(
            m.Match.season_id == match.season_id, m.Match.pair == match.pair, m.Match.id != match.id
        )
    )
    return any(status not in OVER for status in others)


def _state(service: Service, match_id: int) -> tuple[pb.MatchInfo, bool]:
    from arena.service.ops_results import get_match

    info = get_match(service, match_id)
    with service.store.read() as s:
        match = s.get(m.Match, match_id)
        embargoed = match is None or twins_pending(s, match)
    return info, embargoed


def record_events(service: Service, match_id: int) -> list[dict[str, Any]]:
    """The public events of a finished, revealed match, re-simulated from its record."""
    from arena.engine import Match, card_code, parse_card
    from arena.proto.codec import decode_record
    from arena.replay.record import rules_of

    data = service.store.replay(match_id)
    record = decode_record(data)
    game = Match(rules_of(record), record.seed)
    out: list[dict[str, Any]] = []
    for d in record.deals:
        deal = game.start_deal(deck=[parse_card(c) for c in d.deck], dealer=d.dealer)
        out.append({"kind": "deal", "deal": d.number, "dealer": d.dealer})
        for p in d.plays:
            trick = game.play(parse_card(p.card))
            if trick is not None:
                cards = [card_code(trick.lead), card_code(trick.follow)]
                out.append(
                    {"kind": "trick", "deal": d.number, "trick": trick.no, "leader": trick.leader,
                     "cards": cards, "winner": trick.winner}
                )  # fmt: skip
        if deal.done:
            out.append(
                {
                    "kind": "deal_end",
                    "deal": d.number,
                    "winner": deal.outcome.winner,
                    "lines": list(game.lines),
                }
            )
    return out


def releasable(events: list[dict[str, Any]], over: bool) -> int:
    """How many leading events may be shown: all once over, else everything before the last trick."""
    if over:
        return len(events)
    last_trick = max((i for i, e in enumerate(events) if e.get("kind") == "trick"), default=-1)
    if last_trick < 0:  # no trick complete yet: at most the deal's start
        return sum(1 for e in events if e.get("kind") == "deal")
    return last_trick


def to_message(ev: dict[str, Any]) -> pb.WatchEvent | None:
    kind = ev.get("kind")
    if kind == "deal":
        return pb.WatchEvent(deal=pb.WatchDeal(deal=ev["deal"], dealer=ev["dealer"]))
    if kind == "trick":
        return pb.WatchEvent(
            trick=pb.WatchTrick(
                deal=ev["deal"],
                trick=ev["trick"],
                leader=ev["leader"],
                cards=ev["cards"],
                winner=ev["winner"],
            )
        )
    if kind == "deal_end":
        winner = ev.get("winner")
        return pb.WatchEvent(
            deal_end=pb.WatchDealEnd(
                deal=ev["deal"], winner=-1 if winner is None else winner, lines=ev.get("lines", [])
            )
        )
    return None


async def watch(service: Service, match_id: int, poll: float = POLL) -> AsyncIterator[pb.WatchEvent]:
    """Status first, then the match's events one trick behind, then the final status."""
    info, embargoed = await asyncio.to_thread(_state, service, match_id)
    if info is None:  # pragma: no cover - get_match raises NotFound
        raise NotFound(f"no match {match_id}")
    yield pb.WatchEvent(status=info)
    sent = 0
    path = live_path(service.store.home, match_id)
    while True:
        over = info.status in OVER
        if not embargoed:
            if over and info.revealed and not path.exists():
                events = await asyncio.to_thread(record_events, service, match_id)
            else:
                events = await asyncio.to_thread(read_events, path)
            upto = releasable(events, over and info.revealed)
            for ev in events[sent:upto]:
                msg = to_message(ev)
                if msg is not None:
                    yield msg
            sent = max(sent, upto)
        if over:  # released all there is to release (none while embargoed or unrevealed)
            return
        await asyncio.sleep(poll)
        previous = info
        info, embargoed = await asyncio.to_thread(_state, service, match_id)
        if info.status != previous.status or info.revealed != previous.revealed:
            yield pb.WatchEvent(status=info)
