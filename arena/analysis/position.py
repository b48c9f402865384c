"""A phase-2 position (the stock is empty): both hands, who leads, the card on the table, the variant.

Built from an engine `Deal` (`Position.from_deal`) or from explicit hands (`Position.from_hands`), it is
what the solver reads; it holds masks so that the search never touches the engine's objects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.engine.cards import SUITS, cards_of, honours_in, mask_of, parse_card
from arena.engine.deal import Deal
from arena.engine.rules import Rules


class PositionError(ValueError):
    """A position the solver cannot take (stock not empty, hands that overlap or do not fit)."""


@dataclass(frozen=True, slots=True)
class Position:
    """Seat-indexed hands as 32-bit masks; `table` is the card the leader led, if any.

    `honours` are the points captured so far, so that answers can be given as the mover's total at
    the end of the deal.
    """

    hands: tuple[int, int]
    leader: int
    table: int | None = None
    trump: int | None = None  # trump suit 0..3, or None
    must_head: bool = False
    honours: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        a, b = self.hands
        if self.leader not in (0, 1):
            raise PositionError(f"leader must be seat 0 or 1, not {self.leader!r}")
        if not (0 <= a < 1 << 32 and 0 <= b < 1 << 32) or a & b:
            raise PositionError("the two hands must be disjoint sets of cards")
        if self.trump is not None and self.trump not in (0, 1, 2, 3):
            raise PositionError(f"trump must be a suit 0..3 or None, not {self.trump!r}")
        lead_n = self.hands[self.leader].bit_count()
        follow_n = self.hands[1 - self.leader].bit_count()
        if self.table is None:
            if lead_n != follow_n:
                raise PositionError(
                    f"at the start of a trick both hands hold as many cards ({lead_n} vs {follow_n})"
                )
        else:
            if not 0 <= self.table < 32 or (a | b) >> self.table & 1:
                raise PositionError("the card on the table must be a card in neither hand")
            if lead_n + 1 != follow_n:
                raise PositionError(
                    "with a card on the table the follower holds one card more than the leader"
                )
        if lead_n > 8:
            raise PositionError("a phase-2 hand holds at most 8 cards")

    @property
    def to_move(self) -> int:
        return self.leader if self.table is None else 1 - self.leader

    @property
    def done(self) -> bool:
        return self.table is None and self.hands[0] == 0

    @property
    def remaining(self) -> int:
        """Honour points still to be won (in hands and on the table)."""
        table = 0 if self.table is None else honours_in(1 << self.table)
        return honours_in(self.hands[0] | self.hands[1]) + table

    @classmethod
    def from_deal(cls, deal: Deal) -> Position:
        """The position of an engine deal whose stock is empty (phase 2, or finished)."""
        if deal.stock_count:
            raise PositionError(f"the stock still holds {deal.stock_count} cards: the solver needs phase 2")
        return cls(
            hands=(deal.hands[0], deal.hands[1]),
            leader=deal.leader,
            table=deal.table,
            trump=deal.trump_suit,
            must_head=deal.rules.must_head_phase2,
            honours=(deal.honours[0], deal.honours[1]),
        )

    @classmethod
    def from_hands(
        cls,
        hands: tuple[Iterable[int | str] | int, Iterable[int | str] | int],
        leader: int,
        table: int | str | None = None,
        trump: int | str | None = None,
        must_head: bool = False,
        honours: tuple[int, int] = (0, 0),
        rules: Rules | None = None,
    ) -> Position:
        """Explicit hands: masks, or lists of cards as ints or text codes ("AS"); trump a suit int,
        letter ("S") or a card of the suit. `rules` supplies must_head (its trumps flag needs `trump`)."""
        masks = tuple(h if isinstance(h, int) else mask_of(_card(c) for c in h) for h in hands)
        if isinstance(trump, str):
            trump = SUITS.index(trump.upper()) if len(trump) == 1 else parse_card(trump) >> 3
        if rules is not None:
            must_head = rules.must_head_phase2
            if rules.trumps and trump is None:
                raise PositionError("the rules have trumps: say which suit (trump=)")
        return cls(
            hands=(masks[0], masks[1]),
            leader=leader,
            table=None if table is None else _card(table),
            trump=trump,
            must_head=must_head,
            honours=honours,
        )

    def describe(self) -> str:
        from arena.engine.cards import card_code

        def show(m: int) -> str:
            return " ".join(card_code(c) for c in cards_of(m)) or "-"

        table = "" if self.table is None else f" table {card_code(self.table)}"
        trump = "" if self.trump is None else f" trump {SUITS[self.trump]}"
        return (
            f"seat0 [{show(self.hands[0])}] seat1 [{show(self.hands[1])}] leader {self.leader}{table}{trump}"
        )


def _card(c: int | str) -> int:
    return parse_card(c) if isinstance(c, str) else int(c)
