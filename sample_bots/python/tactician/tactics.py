"""The tactician's choice of card: classical Elfern tactics in phase 1, exact play in phase 2.

Phase 1 (stock not empty, no duty to follow suit) is scored in net honours (mine minus the
opponent's): the points a trick moves now, plus what each card is worth if kept (`keep`). That one
number carries the classical advice:
- take honours: beating a led honour moves two points my way;
- avoid winning tricks of blanks: a blank trick moves nothing and only costs a card and the
  follower's seat;
- keep long suits and unbeatable cards for late: they are what wins phase 2, where following suit
  is compulsory, so `keep` values them above their point;
- play a singleton ten early: a ten with several higher cards still out is likely lost later, so
  it is worth little kept, and cashing it on a blank (or leading it while it is short) is cheap;
- track played cards: "unbeatable" and the odds that the opponent can beat a lead are counted
  from the cards still unseen.
The last trick of phase 1 looks at every way the few unseen cards can lie (`lasttrick`), and
phase 2 is handed to the exact solver in `endgame`.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

import endgame
import lasttrick
from elfcards import Position, beats, points, rank, suit

# Weights, in net honours. Tuned by self-play against the random and greedy sample bots.
SURE_CONTROL = 1.0  # an unbeatable honour is worth more than its point: it controls phase 2
RISK_PER_HIGHER = 0.35  # each unseen higher card cuts the chance of cashing an honour
MIN_CASH = 0.1  # even a hopeless honour is cashed now and then
BLANK_BASE = 0.05  # a blank is a cheap discard...
BLANK_RANK = 0.02  # ... the higher the better (a 9 still beats 7 and 8 in phase 2)
LONG_SUIT = 0.25  # a card of a suit I hold 3+ of is length for phase 2
SHORT_HONOUR = 0.1  # an honour in a short suit is easier to pull down in phase 2
FOLLOWER_SEAT = 0.15  # winning a trick makes me lead: the follower's seat is worth a little
CASH_ON_BLANK = 0.2  # leading a blank lets the opponent cash an honour of that suit cheaply


def _suit_len(pos: Position, s: int) -> int:
    return sum(1 for c in pos.hand if suit(c) == s)


def _opp_pool(pos: Position) -> frozenset[int]:
    """Cards the opponent may hold: the unseen ones, minus the face-up trump under the stock."""
    pool = pos.unseen
    if pos.trump_card is not None:
        pool = pool - {pos.trump_card}
    return pool


def _beaters(pos: Position, card: int) -> list[int]:
    """Unseen cards that would beat `card` if it were led."""
    return [c for c in pos.unseen if beats(c, card, pos.trump)]


def _p_holds_any(pos: Position, wanted: int) -> float:
    """Chance that the opponent's hand holds at least one of `wanted` specific unseen cards."""
    pool = len(_opp_pool(pos))
    held = min(pool, max(0, len(pos.hand) - (1 if pos.lead is not None else 0)))
    if wanted <= 0 or pool == 0:
        return 0.0
    return 1.0 - comb(pool - wanted, held) / comb(pool, held)


def keep(pos: Position, card: int) -> float:
    """What holding `card` for later is worth, in net honours."""
    length = _suit_len(pos, suit(card))
    if points(card) == 0:
        value = BLANK_BASE + BLANK_RANK * rank(card)
        return value + (LONG_SUIT if length >= 3 else 0.0)
    higher = len(_beaters(pos, card))
    if higher == 0:
        return 1.0 + SURE_CONTROL + (LONG_SUIT if length >= 3 else 0.0)
    cash = max(MIN_CASH, 1.0 - RISK_PER_HIGHER * higher)
    value = 2.0 * cash - 1.0
    if length <= 1:
        value -= SHORT_HONOUR
    return value + (LONG_SUIT if length >= 3 else 0.0)


def _follow_value(pos: Position, card: int) -> float:
    assert pos.lead is not None
    swing = points(pos.lead) + points(card)
    if beats(card, pos.lead, pos.trump):
        return swing - keep(pos, card) - FOLLOWER_SEAT
    return -swing - keep(pos, card)


def _lead_value(pos: Position, card: int) -> float:
    beaters = _beaters(pos, card)
    q = _p_holds_any(pos, len(beaters))
    if points(card):
        # A sensible opponent beats a led honour whenever it can: two points for it.
        expected = (1.0 - q) * 1.0 - q * (1.0 + 1.0)
    else:
        honour_beaters = sum(1 for c in beaters if points(c))
        expected = -CASH_ON_BLANK * _p_holds_any(pos, honour_beaters)
    return expected - keep(pos, card)


def choose(
    pos: Position,
    nodes: int = lasttrick.NODE_BUDGET,
    time_limit: float | None = None,
    on_time_cut: Callable[[str], None] | None = None,
) -> int:
    """The card to play: a function of the position alone. `nodes` bounds the look at the last
    trick of phase 1; `time_limit` is only its overload guard (lasttrick.choose), and
    `on_time_cut` hears when that guard fired (the move may then differ in a replay)."""
    if pos.phase2:
        best = endgame.solve(pos)  # at most six tricks: exact, 20 ms of CPU at worst, no budget
        if best is not None and best in pos.legal:
            return best
    elif pos.stock == 2:
        best, cut = lasttrick.search(pos, nodes, time_limit)
        if cut and on_time_cut is not None:
            on_time_cut(f"lasttrick: cut after {time_limit:g} s, short of {nodes} nodes; a replay may differ")
        if best is not None and best in pos.legal:
            return best
    score = _follow_value if pos.lead is not None else _lead_value
    # Ties go to the lower rank, then to a fixed suit order: deterministic play.
    return max(sorted(pos.legal, key=lambda c: (rank(c), c)), key=lambda c: score(pos, c))
