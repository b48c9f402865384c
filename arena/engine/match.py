"""A match: deals in sequence, lines and flags, the Ständer multiplier or pot, and who deals next."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.engine.deal import Deal
from arena.engine.rng import deal_deck, dealer_draw
from arena.engine.rules import Rules
from arena.engine.types import DealOutcome, RandomBits, StateError, TrickRecord
from arena.engine.view import View, build_view


@dataclass(frozen=True)
class DealSummary:
    """A finished deal, enough to export and re-simulate it. `index` is 0-based."""

    index: int
    dealer: int
    deck: tuple[int, ...]  # top of the pack first
    plays: tuple[int, ...]  # every card in play order, leader first in each trick
    tricks: tuple[TrickRecord, ...]
    outcome: DealOutcome
    dealer_draws: tuple[tuple[int, int], ...] | None  # the seeded draw that chose this dealer, if any

    @property
    def honours(self) -> tuple[int, int]:
        return self.outcome.honours

    @property
    def winner(self) -> int | None:
        return self.outcome.winner

    @property
    def lines(self) -> tuple[int, int]:
        return self.outcome.lines


class Match:
    """A seeded match. All randomness (dealer draws, shuffles) comes from `seed`; see docs/shuffle.md.

    Typical loop: `deal = m.start_deal()`, then `m.play(card)` until `deal.done`, until `m.over`.
    """

    def __init__(self, rules: Rules | None = None, seed: int = 0) -> None:
        self.rules = rules or Rules()
        self.seed = seed
        self.lines = [0, 0]
        self.multiplier = 1  # pending Ständer multiplier (standoff=double): 1 or 2, never 4
        self.pot = 0  # pending Ständer pot (standoff=pot)
        self.deals: list[DealSummary] = []
        self.deal: Deal | None = None  # the deal in progress, or the last finished one
        self.over = False
        self.winner: int | None = None
        dealer, draws = dealer_draw(seed, 0)
        self.first_dealer_draws: list[tuple[int, int]] = draws
        self.dealer = dealer  # dealer of the current deal, or of the next one between deals
        self.dealer_reason = "the first-dealer draw"
        self._dealer_fixed = False  # False when the dealer comes from a draw (a record may set it)
        self._draws: list[tuple[int, int]] | None = draws  # the draw behind self.dealer, if any

    # -- state ---------------------------------------------------------------------------------------
    @property
    def flags(self) -> tuple[int, int]:
        return (self.lines[0] // 4, self.lines[1] // 4)

    @property
    def deal_index(self) -> int:
        """0-based index of the deal in progress, or of the next deal between deals."""
        if self.deal is not None and not self.deal.done:
            return self.deal.index
        return len(self.deals)

    @property
    def in_deal(self) -> bool:
        return self.deal is not None and not self.deal.done

    @property
    def dealer_is_fixed(self) -> bool:
        """True when the rules fix the next dealer; False when a draw picks it (first deal, after a Ständer)."""
        return self._dealer_fixed

    def view(self, seat: int) -> View:
        """What `seat` may know right now (docs/rules.md §8). Works before, during and between deals."""
        return build_view(self, seat)

    # -- moves ---------------------------------------------------------------------------------------
    def start_deal(self, deck: Sequence[int] | None = None, dealer: int | None = None) -> Deal:
        """Deal the next hand: the seeded deck and dealer, or the given ones (for records and tests).

        A given `dealer` must match the rules when they fix it (StateError otherwise).
        """
        if self.over:
            raise StateError(f"the match is over after {len(self.deals)} deals: no more deals")
        if self.in_deal:
            raise StateError(f"deal {self.deal_index + 1} is still being played")
        index = len(self.deals)
        if dealer is not None and dealer != self.dealer:
            if dealer not in (0, 1):
                raise StateError(f"dealer must be seat 0 or 1, not {dealer!r}")
            if self._dealer_fixed:
                raise StateError(
                    f"seat {dealer} cannot deal deal {index + 1}: seat {self.dealer} deals ({self.dealer_reason})"
                )
            self.dealer = dealer
            self._draws = None
            self.dealer_reason = "given"
        if deck is None:
            deck = deal_deck(self.seed, index)
        self.deal = Deal(self.rules, self.dealer, deck, self.multiplier, self.pot, index)
        return self.deal

    def play(self, card: int) -> TrickRecord | None:
        """Play a card in the current deal; scores the deal and the match when it was the last card."""
        if not self.in_deal:
            raise StateError("no deal is being played: call start_deal() first")
        assert self.deal is not None
        trick = self.deal.play(card)
        if self.deal.done:
            self._finish_deal(self.deal)
        return trick

    def playout(self, rng: RandomBits) -> DealOutcome:
        """Finish the current deal with uniformly random legal cards (`Deal.playout`) and score it."""
        if not self.in_deal:
            raise StateError("no deal is being played: call start_deal() first")
        assert self.deal is not None
        outcome = self.deal.playout(rng)
        self._finish_deal(self.deal)
        return outcome

    def _finish_deal(self, deal: Deal) -> None:
        out = deal.outcome
        assert out is not None
        self.deals.append(
            DealSummary(
                deal.index, deal.dealer, deal.deck, tuple(deal.plays), tuple(deal.tricks), out,
                tuple(self._draws) if self._draws is not None else None,
            )
        )  # fmt: skip
        self.lines[0] += out.lines[0]
        self.lines[1] += out.lines[1]
        n = len(self.deals)
        if out.winner is None:
            if self.rules.standoff == "double":
                self.multiplier = 2  # a further Ständer leaves it at 2
            else:
                self.pot += 1
        else:
            self.multiplier = 1
            self.pot = 0
        if self.rules.max_deals is not None:
            if n >= self.rules.max_deals:
                self.over = True
                a, b = self.lines
                self.winner = None if a == b else (0 if a > b else 1)
        else:
            flags = self.flags
            if max(flags) >= self.rules.flags:
                self.over = True
                self.winner = 0 if flags[0] > flags[1] else 1
        if self.over:
            return
        rule = self.rules.next_dealer
        if out.winner is None:
            if self.rules.dealer_after_tie == "same":
                self._set_dealer(
                    deal.dealer, True, f"after the Ständer in deal {n} the same dealer deals again"
                )
            else:
                dealer, draws = dealer_draw(self.seed, n)
                self._set_dealer(dealer, False, f"the draw after the Ständer in deal {n}", draws)
        elif rule == "winner":
            self._set_dealer(out.winner, True, f"seat {out.winner} won deal {n} and deals")
        elif rule == "loser":
            self._set_dealer(1 - out.winner, True, f"seat {1 - out.winner} lost deal {n} and deals")
        else:
            self._set_dealer(1 - deal.dealer, True, "the deal alternates")

    def _set_dealer(
        self, dealer: int, fixed: bool, reason: str, draws: list[tuple[int, int]] | None = None
    ) -> None:
        self.dealer = dealer
        self._dealer_fixed = fixed
        self.dealer_reason = reason
        self._draws = draws
