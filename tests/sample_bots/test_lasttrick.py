"""The last trick of phase 1: its phase-2 points solver against brute force on the engine, and
the decision's contract (legal, deterministic, bounded by its time budget)."""

from __future__ import annotations

import copy
import random

import lasttrick
import pytest
from selfplay import phase2_position, position

from arena.engine import Rules
from arena.engine.cards import cards_of
from arena.engine.deal import Deal
from arena.engine.rng import deal_deck


def most_points(deal: Deal, seat: int) -> int:
    """Honours `seat` still takes with best play on both sides, by brute force on engine copies."""
    if deal.done:
        return 0
    outcomes = []
    for card in deal.legal_cards():
        child = copy.deepcopy(deal)
        before = child.honours[seat]
        child.play(card)
        outcomes.append(child.honours[seat] - before + most_points(child, seat))
    return max(outcomes) if deal.to_move == seat else min(outcomes)


@pytest.mark.parametrize("seed", range(6))
def test_points_solver_matches_brute_force(seed: int) -> None:
    deal = phase2_position(100 + seed, tricks_left=4, follow=False)
    seat = deal.to_move
    solver = lasttrick._PointsSolver(None, False)
    value = solver.value(deal.hands[seat], deal.hands[1 - seat], True)
    assert value == most_points(deal, seat)


def trick_ten(seed: int, follow: bool) -> Deal:
    rng = random.Random(seed)
    deal = Deal(Rules(), seed % 2, deal_deck(seed, 1))
    while deal.stock_count > 2:
        deal.play(rng.choice(deal.legal_cards()))
    if follow:
        deal.play(rng.choice(deal.legal_cards()))
    return deal


@pytest.mark.parametrize(("seed", "follow"), [(1, False), (2, True), (3, True)])
def test_plays_a_legal_card_and_always_the_same_one(seed: int, follow: bool) -> None:
    deal = trick_ten(seed, follow)
    pos = position(deal, deal.to_move)
    first = lasttrick.choose(pos, budget=60.0)
    assert first in deal.legal_cards()
    assert lasttrick.choose(pos, budget=60.0) == first


def test_a_zero_budget_still_answers_after_one_assignment() -> None:
    deal = trick_ten(4, follow=False)
    assert lasttrick.choose(position(deal, deal.to_move), budget=0.0) in cards_of(deal.hands[deal.to_move])


def test_only_the_last_trick_of_phase_1() -> None:
    deal = Deal(Rules(), 0, deal_deck(5, 0))
    assert lasttrick.choose(position(deal, deal.to_move)) is None
