"""In-process deals between strategy functions, on the arena's own engine: a quick, exact check
of playing strength (the full referee path is tested separately and measured with `arena play`).

A player only ever receives a `Position` built from what its seat may see: its hand, the cards
played face up, the stock count and the honours taken.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import elfcards
import greedy_strategy
import tactics

from arena.engine import Rules
from arena.engine.cards import cards_of
from arena.engine.deal import Deal
from arena.engine.rng import deal_deck

Player = Callable[[elfcards.Position], int]


def tactician(pos: elfcards.Position) -> int:
    return tactics.choose(pos)


def greedy(pos: elfcards.Position) -> int:
    legal = [elfcards.code(c) for c in pos.legal]
    lead = elfcards.code(pos.lead) if pos.lead is not None else None
    return elfcards.parse(greedy_strategy.choose(legal, lead))


def random_player(seed: int) -> Player:
    rng = random.Random(seed)
    return lambda pos: rng.choice(pos.legal)


def position(deal: Deal, seat: int) -> elfcards.Position:
    in_stock = deal.stock_count > 0
    return elfcards.Position(
        hand=frozenset(cards_of(deal.hands[seat])),
        legal=tuple(deal.legal_cards()),
        lead=deal.table,
        seen=frozenset(deal.plays),
        stock=deal.stock_count if deal.phase == 1 else 0,
        my_points=deal.honours[seat],
        opp_points=deal.honours[1 - seat],
        trump=deal.trump_suit,
        trump_card=deal.trump_card if in_stock else None,
        must_head=deal.rules.must_head_phase2,
    )


def play_deal(
    players: tuple[Player, Player], deck: list[int], dealer: int, rules: Rules | None = None
) -> tuple[int, int]:
    """Play one deal; returns the honours per seat."""
    deal = Deal(rules or Rules(), dealer, deck)
    while not deal.done:
        seat = deal.to_move
        card = players[seat](position(deal, seat))
        assert card in deal.legal_cards(), f"{elfcards.code(card)} is not legal"
        deal.play(card)
    return deal.honours[0], deal.honours[1]


def duplicate(a: Player, b: Player, deals: int, seed: int = 1) -> tuple[float, float]:
    """Every deal twice with the seats swapped; returns A's share of deals won (11+ honours) and
    A's mean signed deal value (Tendler, as elfcards.deal_value)."""
    wins, value = 0, 0
    for i in range(deals):
        deck = deal_deck(seed, i)
        for a_seat in (0, 1):
            players = (a, b) if a_seat == 0 else (b, a)
            honours = play_deal(players, deck, dealer=i % 2)
            wins += honours[a_seat] >= 11
            value += elfcards.deal_value(honours[a_seat])
    return wins / (2 * deals), value / (2 * deals)


def phase2_position(seed: int, tricks_left: int, follow: bool) -> Deal:
    """A deal played at random until `tricks_left` tricks remain (and a card led, if `follow`)."""
    rng = random.Random(seed)
    deal = Deal(Rules(), seed % 2, deal_deck(seed, 0))
    while len(deal.tricks) < 16 - tricks_left:
        deal.play(rng.choice(deal.legal_cards()))
    if follow:
        deal.play(rng.choice(deal.legal_cards()))
    return deal
