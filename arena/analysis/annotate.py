"""Annotated deals: every move of a match valued against best play (`arena replay analyse`).

Phase 2 (the stock is empty): the solver's exact value of each legal card, the best cards, and the
honours the card played lost against best play. Phase 1: a PIMC estimate from the mover's own view
(`estimate.py`), marked `"exact": false` with its spread. The output is the JSON of docs/analysis.md.
Deterministic: the worlds of play k of deal d come from a generator seeded with (seed, d, k).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from arena.analysis.estimate import estimate
from arena.analysis.solver import analyse
from arena.analysis.worlds import Knowledge
from arena.engine.cards import card_code, mask_of
from arena.engine.deal import Deal
from arena.engine.rules import Rules

FORMAT = "elfern-analysis/1"
DEFAULT_SAMPLES = 16
MAX_SAMPLES = 1000


def knowledge_of(deal: Deal, seat: int) -> Knowledge:
    """What `seat` knows of a deal in progress (docs/rules.md §8): only its own hand and public cards."""
    played = mask_of(c for t in deal.tricks for c in (t.lead, t.follow))
    stock = deal.stock_count
    return Knowledge(
        seat=seat,
        hand=deal.hands[seat],
        played=played,
        table=deal.table,
        leader=deal.leader,
        stock_count=stock,
        opponent_hand_size=deal.hands[1 - seat].bit_count(),
        honours=(deal.honours[0], deal.honours[1]),
        trump_card=deal.trump_card if stock else None,
        trump_suit=deal.trump_suit,
        must_head=deal.rules.must_head_phase2,
    )


def _round(x: float) -> float:
    return round(x, 2)


def annotate_deal(
    rules: Rules,
    index: int,
    dealer: int,
    deck: Sequence[int],
    plays: Sequence[int],
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    core: str = "auto",
) -> dict[str, Any]:
    """One deal's analysis object. `plays` may stop early (a match ended by a verdict)."""
    deal = Deal(rules, dealer, deck, index=index)
    moves: list[dict[str, Any]] = []
    lost: list[float] = [0, 0]  # stays int 0 for a seat that lost nothing exactly
    estimated = [0.0, 0.0]
    for k, card in enumerate(plays):
        seat = deal.to_move
        assert seat is not None
        move: dict[str, Any] = {"play": k, "seat": seat, "card": card_code(card), "phase": deal.phase}
        legal = deal.legal_cards()
        if deal.stock_count == 0:
            sol = analyse(deal, core)
            loss: float = sol.lost(card)
            move.update(exact=True, values={card_code(c): v for c, v in sorted(sol.values.items())},
                        best=[card_code(c) for c in sol.best], lost=loss)  # fmt: skip
            lost[seat] += loss
        else:
            rng = random.Random(f"{seed}:{index}:{k}")
            est = estimate(knowledge_of(deal, seat), legal, samples, rng, core)
            loss = _round(est.lost(card))
            move.update(exact=False, samples=samples,
                        values={card_code(c): _round(v) for c, v in sorted(est.values.items())},
                        spread={card_code(c): _round(v) for c, v in sorted(est.spread.items())},
                        best=[card_code(c) for c in est.best], lost=loss,
                        lost_stderr=_round(est.lost_stderr(card)))  # fmt: skip
            estimated[seat] += loss
        moves.append(move)
        deal.play(card)
    return {
        "deal": index,
        "moves": moves,
        "lost": lost,
        "lost_estimate": [_round(x) for x in estimated],
        "honours": list(deal.honours),
        "complete": deal.done,
    }


def annotate_match(
    rules: Rules,
    deals: Iterable[tuple[int, Sequence[int], Sequence[int]]],
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    core: str = "auto",
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The analysis of a whole match: `deals` are (dealer, deck top first, plays) in order, 0-based."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples must be from 1 to {MAX_SAMPLES}, not {samples}")
    out = []
    for index, (dealer, deck, plays) in enumerate(deals):
        out.append(annotate_deal(rules, index, dealer, deck, plays, samples, seed, core))
        if progress:
            progress(index + 1)
    return {"format": FORMAT, "samples": samples, "seed": seed, "deals": out}


def record_deals(record: dict[str, Any]) -> tuple[Rules, list[tuple[int, list[int], list[int]]]]:
    """The rules and (dealer, deck, plays) of each deal of an elfern/1 record (docs/records.md) that has
    already been verified (`arena.replay.verify.replay_json`): this only reads it."""
    from arena.engine.cards import parse_card

    rules = Rules.from_dict(record.get("rules") or {})
    deals = [
        (int(d["dealer"]), [parse_card(c) for c in d["deck"]], [parse_card(c) for c in d.get("plays", [])])
        for d in record.get("deals", [])
    ]
    return rules, deals


def annotate_record(
    record: dict[str, Any], samples: int = DEFAULT_SAMPLES, seed: int = 0, core: str = "auto"
) -> dict[str, Any]:
    """`annotate_match` of a verified elfern/1 record."""
    rules, deals = record_deals(record)
    return annotate_match(rules, deals, samples, seed, core)


def mark(move: dict[str, Any]) -> str:
    """The viewer's and the terminal's mark of a move: "" for a best card, "?" for a loss of one honour,
    "??" for more. Estimates (phase 1) carry a "~" and are marked only when the loss is at least half an
    honour and more than twice its standard error (else it is sampling noise)."""
    lost = move["lost"]
    if move["exact"]:
        return "" if lost == 0 else "?" if lost == 1 else "??"
    if lost < 0.5 or lost <= 2 * move["lost_stderr"]:
        return ""
    return "~?" if lost < 1.5 else "~??"


def text_lines(
    analysis: dict[str, Any], seats: Sequence[str] = ("seat 0", "seat 1"), deck: str = "french"
) -> list[str]:
    """The analysis as terminal lines: one per move that was not a best card, and a summary per deal."""
    from arena.engine.cards import code_label

    def lab(code: str) -> str:
        return code_label(code, deck)

    out = [
        f"analysis: phase 2 exact; phase 1 estimated from the mover's view over {analysis['samples']} worlds (~)"
    ]
    for d in analysis["deals"]:
        lost, est = d["lost"], d["lost_estimate"]
        out.append(
            f"deal {d['deal'] + 1}: honours lost in phase 2: {seats[0]} {lost[0]}, {seats[1]} {lost[1]};"
            f" phase 1 (estimate): {seats[0]} {est[0]:.1f}, {seats[1]} {est[1]:.1f}"
        )
        for mv in d["moves"]:
            m = mark(mv)
            if not m:
                continue
            best = " ".join(lab(c) for c in mv["best"])
            if mv["exact"]:
                what = f"lost {mv['lost']}"
            else:
                card = mv["card"]
                what = f"lost ~{mv['lost']:.1f} ±{mv['lost_stderr']:.1f} (value {mv['values'][card]:.1f})"
            out.append(
                f"  {mv['play'] + 1:2d}. {seats[mv['seat']]} {lab(mv['card'])} {m:<3} {what}; best {best}"
            )
    return out
