"""One episode for the PettingZoo and Gymnasium environments: a seeded engine `Match`, played a card at a
time, each deal started as soon as the last one ends. Packs and dealers are the engine's seeded ones
(docs/shuffle.md), so the same seed and the same actions give the same episode, as in the arena."""

from __future__ import annotations

import operator

from arena.engine import Match, Rules, TrickRecord, View
from arena.engine.cards import card_code

#: the rules of an episode unless told otherwise: one deal (the OpenSpiel game's default too)
DEFAULT_RULES = Rules(max_deals=1)


class IllegalAction(ValueError):
    """An action that is not one of the seat's legal cards; the message names both."""


class Episode:
    """A match in progress. `play` returns each seat's reward, the lines it gained in a deal that just
    ended minus the opponent's (0 until then), so an episode's rewards sum to the final difference in
    lines, and the trick the card finished, if any. After a deal ends (`deal_over`), `next_deal` deals
    the next one."""

    def __init__(self, rules: Rules, seed: int) -> None:
        self.rules = rules
        self.seed = seed
        self.match = Match(rules, seed)
        self.match.start_deal()
        self.steps = 0

    @property
    def over(self) -> bool:
        return self.match.over

    @property
    def to_move(self) -> int | None:
        """The seat on move; None once the match is over."""
        deal = self.match.deal
        return None if self.match.over or deal is None else deal.to_move

    def view(self, seat: int) -> View:
        return self.match.view(seat)

    def legal(self) -> list[int]:
        deal = self.match.deal
        return [] if deal is None or self.match.over else deal.legal_cards()

    def play(self, action: object) -> tuple[tuple[int, int], TrickRecord | None]:
        legal = self.legal()
        try:
            card = operator.index(action)  # type: ignore[arg-type]  # a numpy integer is an int here
        except TypeError:
            card = -1
        if card not in legal:
            shown = f" ({card_code(card)})" if 0 <= card < 32 else ""
            raise IllegalAction(
                f"action {action!r}{shown} is not a legal card for seat {self.to_move}; legal actions: "
                f"{legal} ({' '.join(card_code(c) for c in legal)}); use the observation's action_mask"
            )
        before = tuple(self.match.lines)
        trick = self.match.play(card)
        self.steps += 1
        deal = self.match.deal
        assert deal is not None
        if not deal.done:
            return (0, 0), trick
        gained = (self.match.lines[0] - before[0], self.match.lines[1] - before[1])
        return (gained[0] - gained[1], gained[1] - gained[0]), trick

    @property
    def deal_over(self) -> bool:
        """A deal has ended and the next one is not dealt yet (`next_deal`)."""
        deal = self.match.deal
        return deal is not None and deal.done and not self.match.over

    def next_deal(self) -> None:
        self.match.start_deal()
