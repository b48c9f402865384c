"""BASELINE ONLY, not used by the arena: a straightforward list-based Elfern deal, for `arena bench engine`.

This is how one would first write the deal without bitmasks or tables: cards are (suit, rank) tuples,
hands and the stock are lists, legal cards are a list comprehension, and `play` checks the card
against that list. It offers the same per-move API as `arena.engine.Deal` (legal_cards, play, trick
records, draws, outcome) for the default rules (6-card hands, no trumps, follow suit in phase 2), so
the benchmark times the same work done two ways. tests/engine/test_bench.py checks that both give the
same deal for the same deck and the same choices.
"""

from __future__ import annotations

Card = tuple[int, int]  # (suit 0..3 = C D H S, rank 0..7 = 7 8 9 T J Q K A)

TENDLER = {11: 1, 12: 1, 13: 1, 14: 1, 15: 2, 16: 2, 17: 2, 18: 2, 19: 2, 20: 3}


def full_deck() -> list[Card]:
    return [(suit, rank) for suit in range(4) for rank in range(8)]


FULL_DECK = full_deck()  # built once: rebuilding it for every deal's check would only slow the baseline down


class ListDeal:
    """One deal under the default rules, with lists."""

    def __init__(self, dealer: int, deck: list[Card]) -> None:
        if sorted(deck) != FULL_DECK:
            raise ValueError("the deck is not the 32 cards")
        self.dealer = dealer
        nondealer = 1 - dealer
        self.hands: list[list[Card]] = [[], []]
        for packet in range(3):  # packets of two: non-dealer, dealer, non-dealer, ...
            self.hands[nondealer] += deck[4 * packet : 4 * packet + 2]
            self.hands[dealer] += deck[4 * packet + 2 : 4 * packet + 4]
        self.stock = list(deck[12:])
        self.leader = nondealer
        self.to_move: int | None = nondealer
        self.table: Card | None = None
        self.tricks: list[tuple] = []
        self.plays: list[Card] = []
        self.honours = [0, 0]
        self.done = False
        self.outcome: tuple | None = None

    def legal_cards(self) -> list[Card]:
        assert self.to_move is not None, "the deal is over"
        hand = self.hands[self.to_move]
        if self.table is None or len(self.stock) > 0:
            return list(hand)
        same_suit = [card for card in hand if card[0] == self.table[0]]
        return same_suit if same_suit else list(hand)

    def play(self, card: Card) -> tuple | None:
        if self.done:
            raise ValueError("the deal is over")
        if card not in self.legal_cards():
            raise ValueError(f"illegal card {card}")
        seat = self.to_move
        assert seat is not None  # not done
        self.hands[seat].remove(card)
        self.plays.append(card)
        if self.table is None:
            self.table = card
            self.to_move = 1 - seat
            return None
        lead = self.table
        if card[0] == lead[0] and card[1] > lead[1]:
            winner = seat
        else:
            winner = self.leader
        loser = 1 - winner
        won = (1 if lead[1] >= 3 else 0) + (1 if card[1] >= 3 else 0)
        self.honours[winner] += won
        winner_draw = loser_draw = None
        if self.stock:
            winner_draw = self.stock.pop(0)
            loser_draw = self.stock.pop(0)
            self.hands[winner].append(winner_draw)
            self.hands[loser].append(loser_draw)
        trick = (len(self.tricks) + 1, self.leader, lead, card, winner, won, winner_draw, loser_draw)
        self.tricks.append(trick)
        self.table = None
        self.leader = winner
        self.to_move = winner
        if len(self.tricks) == 16:
            self.done = True
            self.to_move = None
            a, b = self.honours
            if a == b:
                self.outcome = ((a, b), None, 0)
            else:
                self.outcome = ((a, b), 0 if a > b else 1, TENDLER[max(a, b)])
        return trick
