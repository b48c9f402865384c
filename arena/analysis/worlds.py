"""Worlds consistent with one seat's knowledge, and a small perfect-information simulator to play them.

The single implementation of world sampling in the arena: `arena replay analyse` uses it for phase 1
and the SDK's simulation API (`arena.sdk.sim`) wraps it for bots. It never looks at hidden cards: a
`Knowledge` holds only what docs/rules.md §8 lets the seat see.

What the seat knows pins the hidden cards down to one set: every card that is neither in its hand, nor
played, nor on the table, nor the face-up trump still under the stock. In phase 1 nobody has to follow
suit, so play reveals nothing about the opponent's hand: each split of that set into the opponent's
hand and the stock (in any order, the turned trump last) is equally likely, and `sample_world` draws
one uniformly. In phase 2 the set *is* the opponent's hand.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.analysis.position import Position
from arena.analysis.pysolve import legal_follows
from arena.engine.cards import HONOUR, cards_of, mask_of
from arena.engine.deal import Deal
from arena.engine.rules import Rules
from arena.engine.tables import FOLLOWER_WINS
from arena.engine.view import View

FULL = (1 << 32) - 1


@dataclass(frozen=True, slots=True)
class Knowledge:
    """One seat's knowledge of a deal in progress, as ints and masks (cards 0..31)."""

    seat: int
    hand: int  # own hand (mask)
    played: int  # every card of finished tricks (mask)
    table: int | None  # the card led in the current trick, if any
    leader: int
    stock_count: int
    opponent_hand_size: int
    honours: tuple[int, int]
    trump_card: int | None = None  # the face-up trump while it lies under the stock
    trump_suit: int | None = None
    must_head: bool = False

    @classmethod
    def from_view(cls, view: View, rules: Rules) -> Knowledge:
        """From the engine's hidden view (arena.engine.View) of a deal in progress."""
        played = 0
        for _leader, lead, follow, _winner in view.tricks:
            played |= 1 << lead | 1 << follow
        return cls(
            seat=view.seat,
            hand=mask_of(view.hand),
            played=played,
            table=view.table,
            leader=view.leader,
            stock_count=view.stock_count,
            opponent_hand_size=view.opponent_hand_size,
            honours=view.honours,
            trump_card=view.trump_card,
            trump_suit=view.trump_suit,
            must_head=rules.must_head_phase2,
        )

    @property
    def unknown(self) -> int:
        """The cards the seat cannot place: the opponent's hand and the hidden part of the stock."""
        seen = self.hand | self.played
        if self.table is not None:
            seen |= 1 << self.table
        if self.trump_card is not None and self.stock_count:
            seen |= 1 << self.trump_card
        return FULL & ~seen


class World:
    """A full deal state: both hands, the stock in draw order, whose trick it is. Mutable; `copy` it."""

    __slots__ = ("hands", "stock", "leader", "table", "honours", "trump", "must_head", "_wins")

    def __init__(
        self,
        hands: list[int],
        stock: list[int],
        leader: int,
        table: int | None,
        honours: list[int],
        trump: int | None,
        must_head: bool,
    ) -> None:
        self.hands = hands
        self.stock = stock  # next card to draw first
        self.leader = leader
        self.table = table
        self.honours = honours
        self.trump = trump
        self.must_head = must_head
        self._wins = FOLLOWER_WINS[trump]

    @classmethod
    def from_deal(cls, deal: Deal) -> World:
        """The true state of an engine deal (it sees everything: for oracles and tests, not for bots)."""
        return cls(
            list(deal.hands), deal.stock, deal.leader, deal.table, list(deal.honours), deal.trump_suit,
            deal.rules.must_head_phase2,
        )  # fmt: skip

    def copy(self) -> World:
        return World(
            list(self.hands), list(self.stock), self.leader, self.table, list(self.honours), self.trump,
            self.must_head,
        )  # fmt: skip

    @property
    def to_move(self) -> int:
        return self.leader if self.table is None else 1 - self.leader

    @property
    def done(self) -> bool:
        return self.table is None and not self.hands[0] and not self.hands[1]

    @property
    def phase(self) -> int:
        return 1 if self.stock else 2

    def legal_mask(self) -> int:
        hand = self.hands[self.to_move]
        if self.table is None or self.stock:
            return hand
        return legal_follows(hand, self.table, -1 if self.trump is None else self.trump, self.must_head)

    def legal_cards(self) -> list[int]:
        return cards_of(self.legal_mask())

    def play(self, card: int) -> None:
        """Play a legal card (not checked: the simulator trusts its caller)."""
        seat = self.to_move
        self.hands[seat] &= ~(1 << card)
        lead = self.table
        if lead is None:
            self.table = card
            return
        winner = seat if self._wins[lead << 5 | card] else self.leader
        self.honours[winner] += HONOUR[lead] + HONOUR[card]
        if self.stock:
            self.hands[winner] |= 1 << self.stock[0]
            self.hands[1 - winner] |= 1 << self.stock[1]
            del self.stock[:2]
        self.table = None
        self.leader = winner

    def position(self) -> Position:
        """The solver's position; the stock must be empty."""
        return Position(
            hands=(self.hands[0], self.hands[1]),
            leader=self.leader,
            table=self.table,
            trump=self.trump,
            must_head=self.must_head,
            honours=(self.honours[0], self.honours[1]),
        )


def sample_world(know: Knowledge, rng: random.Random) -> World:
    """One world drawn uniformly from those consistent with `know`."""
    hidden = cards_of(know.unknown)
    rng.shuffle(hidden)
    n = know.opponent_hand_size
    opp = mask_of(hidden[:n])
    stock = hidden[n:]
    if know.trump_card is not None and know.stock_count:
        stock.append(know.trump_card)  # the turned trump is drawn last
    if len(stock) != know.stock_count or len(hidden) < n:
        raise ValueError(
            f"inconsistent knowledge: {len(hidden)} hidden cards for an opponent hand of {n} "
            f"and a stock of {know.stock_count}"
        )
    hands = [0, 0]
    hands[know.seat] = know.hand
    hands[1 - know.seat] = opp
    return World(hands, stock, know.leader, know.table, list(know.honours), know.trump_suit, know.must_head)
