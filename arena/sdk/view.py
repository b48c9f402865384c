"""What a bot sees on its turn: the TurnRequest's typed fields, as plain Python values."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from arena.proto import referee_pb2 as pb
from arena.proto.view_fields import CARD, CARDS, INT, NUMBER, PAIR, SUIT, VIEW_FIELDS
from arena.sdk import cards as C


@dataclass(frozen=True)
class Trick:
    number: int
    leader: int
    lead: str
    follow: str
    winner: int
    honours: int


@dataclass(frozen=True)
class View:
    """Your knowledge at this turn (docs/rules.md §8). Cards are text codes such as "AS"."""

    turn_id: int
    seat: int
    deal_number: int
    trick_number: int
    phase: int  # 1: no duty to follow suit; 2: must follow
    dealer: int
    leader: int
    hand: tuple[str, ...]
    legal: tuple[str, ...]  # what you may play now
    lead_card: str | None  # the opponent's card if you follow, None if you lead
    tricks: tuple[Trick, ...]  # finished tricks of this deal
    honours: tuple[int, int]  # per seat, this deal
    stock_size: int
    trump_card: str | None
    trump_suit: str | None
    drawn: tuple[str, ...]
    opponent_hand_size: int
    lines: tuple[int, int]
    flags: tuple[int, int]
    multiplier: int
    pot: int
    deals_played: int
    move_seconds: float  # free time for this move
    bank_seconds: float  # left in your time bank

    @classmethod
    def from_request(cls, req: pb.TurnRequest) -> View:
        """The View's fields are the wire View's, one row of `VIEW_FIELDS` each; the rest comes from
        the TurnRequest (turn id, legal cards, clocks)."""
        v = req.view
        fields: dict[str, Any] = {wire: _READ[kind](getattr(v, wire)) for wire, _, kind in VIEW_FIELDS}
        fields["multiplier"] = fields["multiplier"] or 1  # 0: a referee that did not send it
        return cls(
            turn_id=req.turn_id, legal=tuple(req.legal_cards),
            tricks=tuple(Trick(t.number, t.leader, t.lead_card, t.follow_card, t.winner, t.honours) for t in v.tricks),
            deals_played=v.deals_played, move_seconds=req.move_ms / 1000, bank_seconds=req.bank_ms / 1000,
            **fields,
        )  # fmt: skip

    # -- conveniences --------------------------------------------------------------------------------
    @property
    def leading(self) -> bool:
        return self.lead_card is None

    @property
    def my_honours(self) -> int:
        return self.honours[self.seat]

    @property
    def opponent_honours(self) -> int:
        return self.honours[1 - self.seat]

    @property
    def played(self) -> tuple[str, ...]:
        """Every card seen on the table this deal, including the current lead."""
        out = [c for t in self.tricks for c in (t.lead, t.follow)]
        if self.lead_card:
            out.append(self.lead_card)
        return tuple(out)

    def winning(self) -> list[str]:
        """The legal cards that would take the current trick (empty when you lead)."""
        if self.lead_card is None:
            return []
        return [c for c in self.legal if C.beats(c, self.lead_card, self.trump_suit or "")]

    def losing(self) -> list[str]:
        """The legal cards that would lose the current trick (all of them when you lead)."""
        won = set(self.winning())
        return [c for c in self.legal if c not in won]


def _pair(values: Iterable[int]) -> tuple[int, int]:
    vals = list(values) + [0, 0]
    return (vals[0], vals[1])


def _same(value: Any) -> Any:
    return value


def _or_none(value: str) -> str | None:
    return value or None


# how each kind of VIEW_FIELDS row is read off the wire
_READ: dict[str, Callable[[Any], Any]] = {
    INT: _same, NUMBER: _same, PAIR: _pair, CARDS: tuple, CARD: _or_none, SUIT: _or_none,
}  # fmt: skip
