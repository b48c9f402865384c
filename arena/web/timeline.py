"""Turn an `elfern/1` record into the replay viewer's steps, re-simulated by `arena.replay.walk.Walk`.

Step 0 of a deal is the table right after dealing; step k is the table after the k-th card. What a
step shows comes only from the engine's `view(seat)` (docs/rules.md §8): the omniscient view joins both
seats' views, and a seat's view shows the opponent's hand as backs. Nothing here re-implements the
hidden-information rules. A record that stops being legal stops the timeline there, with the reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from arena.engine.cards import card_code, card_label, parse_card
from arena.engine.deal import Deal
from arena.engine.match import Match
from arena.engine.rules import Rules
from arena.engine.types import EngineError, StateError, TrickRecord
from arena.engine.view import View
from arena.proto import replay_pb2
from arena.replay.export import early_end
from arena.replay.record import rules_of
from arena.replay.walk import DealEnd, DealSource, DealStart, Played, Walk, record_deals


class TimelineError(ValueError):
    """A record the viewer cannot start at all (bad rules or not elfern/1)."""


@dataclass(frozen=True, slots=True)
class DealState:
    """The match as a deal starts, beyond the record's deck and dealer: what re-simulating that deal
    alone needs (the deal's scoring and the steps' `lines`)."""

    lines: tuple[int, int]  # before the deal
    multiplier: int  # the pending Ständer multiplier
    pot: int  # the pending Ständer pot


def _codes(cards: tuple[int, ...] | list[int]) -> list[str]:
    return [card_code(c) for c in cards]


def _step(
    match: Match,
    perspective: int | None,
    trick: TrickRecord | None,
    played: tuple[int, int] | None,
    names: list[str],
    deck: str,
    turned: int | None,
) -> dict[str, Any]:
    views: list[View] = [match.view(0), match.view(1)]
    v = views[perspective if perspective is not None else 0]
    hands: list[list[str] | None] = [_codes(views[0].hand), _codes(views[1].hand)]
    counts = [len(views[0].hand), len(views[1].hand)]
    if perspective is not None:
        hands[1 - perspective] = None
        counts[1 - perspective] = v.opponent_hand_size
    if trick is not None:
        table = [
            {"seat": trick.leader, "card": card_code(trick.lead)},
            {"seat": 1 - trick.leader, "card": card_code(trick.follow)},
        ]
    elif v.table is not None:
        table = [{"seat": v.leader, "card": card_code(v.table)}]
    else:
        table = []
    drew: list[dict[str, Any]] = []
    if trick is not None and trick.winner_draw is not None:
        assert trick.loser_draw is not None  # both draw, or neither
        for seat, card in ((trick.winner, trick.winner_draw), (1 - trick.winner, trick.loser_draw)):
            visible = perspective is None or perspective == seat or card == turned
            drew.append({"seat": seat, "card": card_code(card) if visible else None})
    return {
        "hands": hands,
        "counts": counts,
        "stock": v.stock_count,
        "table": table,
        "trick_winner": trick.winner if trick is not None else None,
        "tricks": len(v.tricks),
        "honours": list(v.honours),
        "to_move": v.to_move,
        "legal": _legal(views, perspective),
        "phase": v.phase,
        "drew": drew,
        "trump": card_code(v.trump_card) if v.trump_card is not None else None,
        "lines": list(v.lines),
        "note": _note(played, trick, names, deck),
    }


def _legal(views: list[View], perspective: int | None) -> list[str] | None:
    """The mover's legal cards when the rules forbid some of its hand (phase 2), as far as the view shows them."""
    mover = views[0].to_move
    if mover is None or (perspective is not None and perspective != mover):
        return None
    v = views[mover]
    return _codes(v.legal) if len(v.legal) < len(v.hand) else None


def _note(played: tuple[int, int] | None, trick: TrickRecord | None, names: list[str], deck: str) -> str:
    if played is None:
        return "Cards dealt."
    seat, card = played
    verb = "plays" if trick is not None else "leads"
    text = f"{names[seat]} {verb} {card_label(card, deck)}."
    if trick is not None:
        text += f" {names[trick.winner]} wins trick {trick.no}"
        text += f" (+{trick.honours})." if trick.honours else "."
    return text


def _deal_over(
    honours: tuple[int, int], winner: int | None, lines: tuple[int, int], names: list[str], match: Match
) -> str:
    text = f"Deal over: honours {honours[0]}–{honours[1]}; "
    if winner is None:
        text += "a Ständer, nobody scores."
    else:
        text += f"{names[winner]} scores {lines[winner]} line{'s' if lines[winner] != 1 else ''}."
    if match.over:
        text += " Match over: " + ("a draw." if match.winner is None else f"{names[match.winner]} wins.")
    return text


def _summarise(out: dict[str, Any], deal: Deal, names: list[str], match: Match) -> None:
    """A deal's tricks and result (or, for a deal the record stops inside, the state it stopped in)."""
    out["tricks"] = [
        {
            "no": t.no,
            "leader": t.leader,
            "cards": [card_code(t.lead), card_code(t.follow)],
            "winner": t.winner,
            "honours": t.honours,
        }
        for t in deal.tricks
    ]
    out["complete"] = deal.done
    if deal.outcome is not None:
        o = deal.outcome
        if out["steps"]:  # an outline walks without steps
            out["steps"][-1]["note"] += " " + _deal_over(o.honours, o.winner, o.lines, names, match)
        out.update(
            honours=list(o.honours),
            winner=o.winner,
            value=o.value,
            lines=list(o.lines),
            multiplier=o.multiplier,
            pot=o.pot,
            totals=list(match.lines),
        )
    else:
        out.update(
            honours=list(deal.honours),
            winner=None,
            value=0,
            lines=[0, 0],
            multiplier=deal.multiplier,
            pot=deal.pot,
            totals=list(match.lines),
        )


def build_timeline(record: dict[str, Any], perspective: int | None = None) -> dict[str, Any]:
    """The viewer's data for a whole match, from one seat's view (0, 1) or omniscient (None)."""
    if perspective not in (None, 0, 1):
        raise TimelineError(f"perspective must be 0, 1 or omniscient, not {perspective!r}")
    if not isinstance(record, dict) or record.get("format") != "elfern/1":
        raise TimelineError('not an elfern/1 record (it needs "format": "elfern/1")')
    try:
        rules = Rules.from_dict(record.get("rules") or {})
    except Exception as exc:  # RulesError names the option
        raise TimelineError(f"bad rules: {exc}") from None
    names = [str(n) for n in (record.get("seats") or ["seat 0", "seat 1"])][:2]
    while len(names) < 2:
        names.append(f"seat {len(names)}")
    seed = record.get("seed") or 0
    match = Match(rules, int(seed) if isinstance(seed, int) else 0)
    deals: list[dict[str, Any]] = []

    def sources() -> Iterator[DealSource]:
        for number, raw in enumerate(record.get("deals") or [], 1):
            deals.append({"number": number, "dealer": raw.get("dealer"), "steps": [], "tricks": []})
            deck = [parse_card(c) for c in raw.get("deck") or []]
            yield deck, raw.get("dealer"), (parse_card(code) for code in raw.get("plays") or [])

    return walk_timeline(
        match, names, deals, sources(), perspective, record.get("verdict"), record.get("winner")
    )


def record_timeline(
    record: replay_pb2.MatchRecord, names: list[str], perspective: int | None
) -> dict[str, Any]:
    """The same from a binary record, in one walk of it (the web's viewer; no elfern/1 form first).
    A record that does not re-simulate raises the engine's error instead of stopping the timeline."""
    if perspective not in (None, 0, 1):
        raise TimelineError(f"perspective must be 0, 1 or omniscient, not {perspective!r}")
    match = Match(rules_of(record), record.seed)
    deals: list[dict[str, Any]] = []

    def sources() -> Iterator[DealSource]:
        for number, (deck, dealer, plays) in enumerate(record_deals(record), 1):
            deals.append({"number": number, "dealer": dealer, "steps": [], "tricks": []})
            yield deck, dealer, plays

    verdict = early_end(record)
    winner = None if verdict is None or record.result.winner < 0 else record.result.winner
    return walk_timeline(match, names, deals, sources(), perspective, verdict, winner, strict=True)


def walk_timeline(
    match: Match,
    names: list[str],
    deals: list[dict[str, Any]],
    sources: Iterator[DealSource],
    perspective: int | None,
    verdict: Any,
    winner: Any,
    strict: bool = False,
    starts: list[DealState] | None = None,
) -> dict[str, Any]:
    """Walk the deals (`sources` adds each deal's entry to `deals` as the walk reaches it) into steps.
    With `starts` (an outline, `arena.web.deals`) no step is built: each deal's starting state is
    appended to it instead, and the deals keep only their summaries."""
    rules = match.rules
    walk = Walk(match, sources)
    error: str | None = None
    deal: Deal | None = None
    turned: int | None = None
    try:
        for step in walk:
            if isinstance(step, DealStart):
                deal = step.deal
                deals[-1]["dealer"] = deal.dealer
                if starts is not None:
                    starts.append(DealState((match.lines[0], match.lines[1]), match.multiplier, match.pot))
                    continue
                # the face-up trump is public until drawn (docs/rules.md §7)
                turned = match.view(0).trump_card
                deals[-1]["steps"].append(_step(match, perspective, None, None, names, rules.deck, turned))
            elif isinstance(step, Played):
                if starts is not None:
                    continue
                played = (step.seat, step.card)
                deals[-1]["steps"].append(
                    _step(match, perspective, step.trick, played, names, rules.deck, turned)
                )
            elif isinstance(step, DealEnd):
                _summarise(deals[-1], step.deal, names, match)
    except (EngineError, ValueError) as exc:
        if strict:
            raise
        if walk.play is None:
            error = f"deal {walk.deal}: {exc}"
        else:
            assert deal is not None  # a play is reached only after its deal started
            why = (
                "the deal is over but the record plays on"
                if isinstance(exc, StateError) and deal.done
                else exc
            )
            error = f"deal {walk.deal}, play {walk.play}: {why}"
            _summarise(deals[-1], deal, names, match)
    if verdict and deals and deals[-1]["steps"] and not error:
        status = verdict.get("status") if isinstance(verdict, dict) else str(verdict)
        seat = verdict.get("seat") if isinstance(verdict, dict) else None
        who = f"{names[seat]}: " if seat in (0, 1) else ""
        deals[-1]["steps"][-1]["note"] += f" The match ended here by a verdict ({who}{status})."
    return {
        "format": "elfern/1 viewer",
        "seats": names,
        "deck": rules.deck,
        "rules": rules.to_dict(),
        "perspective": perspective,
        "deals": deals,
        "lines": list(match.lines),
        "winner": match.winner if match.over else winner,
        "over": match.over,
        "error": error,
    }
