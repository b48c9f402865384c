"""The hidden view: exactly what one seat may know (docs/rules.md §8), and nothing more.

Everything a bot or a seat's replay sees is built here. Two states that differ only in cards the seat
cannot know (the opponent's hand, the cards it drew, the order of the stock) give the same View and
byte-identical `to_json()`; tests/engine/test_view_invariance.py resamples hidden cards to prove it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from arena.engine.cards import SUITS, card_code, cards_of

if TYPE_CHECKING:
    from arena.engine.match import Match

# status values
BEFORE_DEAL = "before_deal"  # the match has started, no card dealt yet
PLAYING = "playing"
DEAL_OVER = "deal_over"  # between deals: the view shows the deal that just ended
MATCH_OVER = "match_over"


@dataclass(frozen=True, slots=True)
class View:
    """One seat's knowledge. Cards are ints here and text codes in `to_dict()` / `to_json()`."""

    seat: int
    status: str
    deal_index: int  # 0-based: the deal in progress, or the one that just ended
    dealer: int
    leader: int  # who leads (or led) the current trick
    to_move: int | None  # None when no card is due
    phase: int  # 1 or 2; 0 before the first deal
    trick_no: int  # 1-based trick in progress (16 once the deal is done, 0 before the first deal)
    hand: tuple[int, ...]  # own hand, ascending
    table: int | None  # the card led in the current trick, if any
    tricks: tuple[tuple[int, int, int, int], ...]  # (leader, lead, follow, winner) per played trick
    stock_count: int
    drawn: tuple[int, ...]  # the cards this seat drew, in order
    trump_card: int | None  # the turned trump while it still lies under the stock
    trump_suit: int | None  # trumps variant: the suit of the turned card (public all deal)
    honours: tuple[int, int]  # honour points captured so far this deal
    opponent_hand_size: int
    legal: tuple[int, ...]  # own legal cards when on move, else ()
    lines: tuple[int, int]
    flags: tuple[int, int]
    multiplier: int
    pot: int
    match_winner: int | None  # set once the match is over (None also for a draw)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: cards as text codes, suits as letters."""

        def code(c: int | None) -> str | None:
            return None if c is None else card_code(c)

        return {
            "seat": self.seat,
            "status": self.status,
            "deal_index": self.deal_index,
            "dealer": self.dealer,
            "leader": self.leader,
            "to_move": self.to_move,
            "phase": self.phase,
            "trick_no": self.trick_no,
            "hand": [card_code(c) for c in self.hand],
            "table": code(self.table),
            "tricks": [
                {"leader": ld, "lead": card_code(a), "follow": card_code(b), "winner": w}
                for ld, a, b, w in self.tricks
            ],
            "stock_count": self.stock_count,
            "drawn": [card_code(c) for c in self.drawn],
            "trump_card": code(self.trump_card),
            "trump_suit": None if self.trump_suit is None else SUITS[self.trump_suit],
            "honours": list(self.honours),
            "opponent_hand_size": self.opponent_hand_size,
            "legal": [card_code(c) for c in self.legal],
            "lines": list(self.lines),
            "flags": list(self.flags),
            "multiplier": self.multiplier,
            "pot": self.pot,
            "match_winner": self.match_winner,
        }

    def to_json(self) -> bytes:
        """Canonical bytes: sorted keys, no spaces, UTF-8."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":")).encode()


class _Common(TypedDict):
    """The View fields that are the same before and during a deal."""

    seat: int
    lines: tuple[int, int]
    flags: tuple[int, int]
    multiplier: int
    pot: int
    match_winner: int | None


def build_view(match: Match, seat: int) -> View:
    """Project the match onto what `seat` may know."""
    if seat not in (0, 1):
        raise ValueError(f"seat must be 0 or 1, not {seat!r}")
    deal = match.deal
    common: _Common = {
        "seat": seat,
        "lines": (match.lines[0], match.lines[1]),
        "flags": match.flags,
        "multiplier": match.multiplier,
        "pot": match.pot,
        "match_winner": match.winner,
    }
    if deal is None:
        return View(
            status=MATCH_OVER if match.over else BEFORE_DEAL,
            deal_index=0, dealer=match.dealer, leader=1 - match.dealer, to_move=None, phase=0,
            trick_no=0, hand=(), table=None, tricks=(), stock_count=0, drawn=(), trump_card=None,
            trump_suit=None, honours=(0, 0), opponent_hand_size=0, legal=(), **common,
        )  # fmt: skip
    if deal.done:
        status = MATCH_OVER if match.over else DEAL_OVER
    else:
        status = PLAYING
    stock_count = deal.stock_count
    legal = tuple(cards_of(deal.legal_mask())) if deal.to_move == seat else ()
    return View(
        status=status,
        deal_index=deal.index,
        dealer=deal.dealer,
        leader=deal.leader,
        to_move=deal.to_move,
        phase=deal.phase,
        trick_no=deal.trick_no,
        hand=tuple(cards_of(deal.hands[seat])),
        table=deal.table,
        tricks=tuple((t.leader, t.lead, t.follow, t.winner) for t in deal.tricks),
        stock_count=stock_count,
        drawn=tuple(deal.drawn[seat]),
        trump_card=deal.trump_card if stock_count > 0 else None,
        trump_suit=deal.trump_suit,
        honours=(deal.honours[0], deal.honours[1]),
        opponent_hand_size=deal.hands[1 - seat].bit_count(),
        legal=legal,
        **common,
    )
