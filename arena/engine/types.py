"""The engine's errors and the small immutable results a deal hands out."""

from __future__ import annotations

from typing import NamedTuple, Protocol


class EngineError(Exception):
    """Base of the engine's errors."""


class StateError(EngineError):
    """A call that does not fit the current state (playing after the deal ended, a wrong dealer...)."""


class DeckError(EngineError):
    """A deck that is not exactly the 32 cards."""


class IllegalMove(EngineError):
    """A card the rules forbid. Nothing was changed. `reason` names the card, the rule and the legal cards."""

    def __init__(self, reason: str, card: int, legal: list[int]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.card = card
        self.legal = legal


class TrickRecord(NamedTuple):
    """A finished trick. `no` is 1-based; the draws are None in phase 2."""

    no: int
    leader: int
    lead: int
    follow: int
    winner: int
    honours: int  # honour points the winner took with this trick (0..2)
    winner_draw: int | None
    loser_draw: int | None


class DealOutcome(NamedTuple):
    """The result of a finished deal. `lines` include the pending multiplier and pot."""

    honours: tuple[int, int]
    winner: int | None  # None for a Ständer (10-10)
    value: int  # the scoring table's value, before multiplier and pot (0 for a Ständer)
    lines: tuple[int, int]
    multiplier: int
    pot: int


class RandomBits(Protocol):
    """What playouts need from a generator: `random.Random` and its subclasses have it."""

    def getrandbits(self, k: int, /) -> int: ...
