"""The one re-simulation of a record: the engine plays its deals card by card, and `Walk` yields each
step (a deal's start, each play with the trick it ended, the deal's end, the match's end).

Verify, export, render and the web's timeline all walk a record with it and differ only in what they
make of the steps and how they word an error. A record is given as deal sources, read lazily: the deck
and dealer of a deal when it starts, each card when it is played. So a source may check its own
input as it goes (`arena replay verify` does), and an error raised by a source or by the engine comes
with the walk's position (`Walk.deal`, `Walk.play`), which says which deal and card it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from arena.engine import Deal, Match, TrickRecord, parse_card
from arena.proto import replay_pb2

#: one deal of a record: its deck, its dealer (None: the rules' dealer) and its cards in play order
DealSource = tuple[Sequence[int], int | None, Iterable[int]]


@dataclass(frozen=True, slots=True)
class DealStart:
    number: int  # 1-based
    deal: Deal  # just dealt


@dataclass(frozen=True, slots=True)
class Played:
    number: int  # the deal, 1-based
    k: int  # the card's place in the deal, 1-based
    seat: int
    card: int
    trick: TrickRecord | None  # the trick this card ended, with its result; None: a lead


@dataclass(frozen=True, slots=True)
class DealEnd:
    number: int
    deal: Deal  # `deal.outcome` is None when the record stops inside the deal (an early end)


@dataclass(frozen=True, slots=True)
class MatchEnd:
    match: Match


Step = DealStart | Played | DealEnd | MatchEnd


class Walk:
    """Iterate once for the steps. `match` is the engine's state after the last step yielded; `deal` and
    `play` are where the walk is (1-based; `play` is None at a deal's start), also after an error."""

    def __init__(self, match: Match, deals: Iterable[DealSource]) -> None:
        self.match = match
        self._deals = deals
        self.deal = 0
        self.play: int | None = None

    def __iter__(self) -> Iterator[Step]:
        m = self.match
        sources = iter(self._deals)
        while True:
            self.deal, self.play = self.deal + 1, None
            source = next(sources, None)
            if source is None:
                break
            deck, dealer, plays = source
            deal = m.start_deal(deck=deck, dealer=dealer)
            yield DealStart(self.deal, deal)
            cards = iter(plays)
            k = 0
            while True:
                k += 1
                self.play = k
                card = next(cards, None)
                if card is None:
                    break
                seat = deal.to_move
                trick = m.play(card)  # a finished deal refuses the card: StateError
                assert seat is not None  # the deal was in progress
                yield Played(self.deal, k, seat, card, trick)
            self.play = None
            yield DealEnd(self.deal, deal)
        self.deal -= 1
        yield MatchEnd(m)


def record_deals(record: replay_pb2.MatchRecord) -> Iterator[DealSource]:
    """A binary record's deals as sources (card codes parsed as they are reached)."""
    for d in record.deals:
        yield [parse_card(c) for c in d.deck], d.dealer, (parse_card(p.card) for p in d.plays)
