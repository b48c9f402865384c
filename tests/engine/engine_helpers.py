"""Helpers shared by the engine and replay tests: decks built around chosen hands, and positions set up directly."""

from __future__ import annotations

import random

from arena.engine import Deal, Match, parse_card
from arena.engine.deal import DEAL_POSITIONS


def cards(text: str) -> list[int]:
    """`"AS KS 7H"` -> card ints."""
    return [parse_card(code) for code in text.split()]


def deck_with(nondealer: str, dealer: str, stock: str = "", hand_size: int = 6) -> list[int]:
    """A full deck whose deal gives these hands; `stock` are the top stock cards, the rest ascending."""
    non_pos, dealer_pos = DEAL_POSITIONS[hand_size]
    deck: list[int | None] = [None] * 32
    for pos, card in zip(non_pos, cards(nondealer), strict=True):
        deck[pos] = card
    for pos, card in zip(dealer_pos, cards(dealer), strict=True):
        deck[pos] = card
    top = cards(stock)
    for k, card in enumerate(top):
        deck[2 * hand_size + k] = card
    rest = iter(sorted(set(range(32)) - {c for c in deck if c is not None}))
    return [c if c is not None else next(rest) for c in deck]


def set_phase2_position(deal: Deal, leader: int, leader_hand: str, follower_hand: str) -> None:
    """Put a deal into phase 2 with the given hands (white-box: for testing one rule in isolation)."""
    deal.hands = [0, 0]
    for seat, text in ((leader, leader_hand), (1 - leader, follower_hand)):
        for card in cards(text):
            deal.hands[seat] |= 1 << card
    deal._next = len(deal._stock)
    deal.leader = deal.to_move = leader
    deal.table = None


def play_random_deal(m: Match, rng: random.Random) -> None:
    """Start a deal and play it out with random legal cards."""
    deal = m.start_deal()
    while not deal.done:
        m.play(rng.choice(deal.legal_cards()))


def play_deal_where(m: Match, wanted, tries: int = 3000) -> None:
    """Start the next deal and play it so that `wanted(outcome)` holds (searching random playouts)."""
    deal = m.start_deal()
    for attempt in range(tries):
        trial = Deal(m.rules, deal.dealer, deal.deck, deal.multiplier, deal.pot)
        trial.playout(random.Random(attempt))
        if wanted(trial.outcome):
            for card in trial.plays:
                m.play(card)
            return
    raise AssertionError("no playout gives the wanted outcome")


def tie(outcome) -> bool:
    return outcome.winner is None


def won_by(seat: int):
    return lambda outcome: outcome.winner == seat
