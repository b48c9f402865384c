"""The exact phase-2 solver's public API: `solve`, `analyse`, `best_value` (docs/analysis.md).

Once the stock is empty Elfern is a game of perfect information. For each legal card of the side to
move, `solve` gives the honours the mover's side ends the deal with when both sides play best from
there: the honours it has already captured plus what it captures from here on. The search itself is in
the compiled core (`arena/analysis/_core.c`, via `arena.analysis.core`) when it is built, else in
pure Python (`arena.analysis.pysolve`); both give identical answers.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.analysis import core as _core
from arena.analysis.position import Position
from arena.engine.cards import card_code
from arena.engine.deal import Deal


@dataclass(frozen=True, slots=True)
class Solution:
    """The answer for one position. `values[card]` are end-of-deal honours for the mover's side."""

    mover: int
    values: dict[int, int]
    best: tuple[int, ...]  # the cards that reach the best value, ascending
    best_value: int

    def lost(self, card: int) -> int:
        """Honours `card` gives away against best play (0 for a best card)."""
        return self.best_value - self.values[card]

    def to_dict(self) -> dict[str, object]:
        return {
            "mover": self.mover,
            "values": {card_code(c): v for c, v in sorted(self.values.items())},
            "best": [card_code(c) for c in self.best],
            "best_value": self.best_value,
        }


def _position(state: Position | Deal) -> Position:
    return state if isinstance(state, Position) else Position.from_deal(state)


def solve(state: Position | Deal, core: str = "auto") -> dict[int, int]:
    """card -> the honours the mover's side ends the deal with under best play, for each legal card.

    `state` is an engine `Deal` with the stock empty or a `Position`. `core` is "auto" (compiled if
    built), "c" (compiled, or CoreUnavailable) or "python". An empty dict when the deal is over.
    """
    pos = _position(state)
    if pos.done:
        return {}
    mover = pos.to_move
    a, b = pos.hands[pos.leader], pos.hands[1 - pos.leader]
    table = -1 if pos.table is None else pos.table
    trump = -1 if pos.trump is None else pos.trump
    future = _core.root_values(a, b, table, trump, pos.must_head, core)
    base = pos.honours[mover]
    return {card: base + v for card, v in future.items()}


def analyse(state: Position | Deal, core: str = "auto") -> Solution:
    """`solve` plus the best cards and their value."""
    pos = _position(state)
    values = solve(pos, core)
    top = max(values.values(), default=pos.honours[pos.to_move])
    best = tuple(sorted(c for c, v in values.items() if v == top))
    return Solution(mover=pos.to_move, values=values, best=best, best_value=top)


def best_value(state: Position | Deal, core: str = "auto") -> int:
    """The honours the side to move ends the deal with under best play."""
    return analyse(state, core).best_value
