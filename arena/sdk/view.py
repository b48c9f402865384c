"""What a bot sees on its turn: the TurnRequest's typed fields, as plain Python values."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from arena.proto import referee_pb2 as pb
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
        v = req.view
        return cls(
            turn_id=req.turn_id, seat=v.seat, deal_number=v.deal_number, trick_number=v.trick_number,
            phase=v.phase, dealer=v.dealer, leader=v.leader, hand=tuple(v.hand), legal=tuple(req.legal_cards),
            lead_card=v.lead_card or None,
            tricks=tuple(Trick(t.number, t.leader, t.lead_card, t.follow_card, t.winner, t.honours) for t in v.tricks),
            honours=_pair(v.honours), stock_size=v.stock_size, trump_card=v.trump_card or None,
            trump_suit=v.trump_suit or None, drawn=tuple(v.drawn), opponent_hand_size=v.opponent_hand_size,
            lines=_pair(v.lines), flags=_pair(v.flags), multiplier=v.multiplier or 1, pot=v.pot,
            deals_played=v.deals_played, move_seconds=req.move_ms / 1000, bank_seconds=req.bank_ms / 1000,
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
