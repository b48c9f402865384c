"""The last trick of phase 1: its phase-2 points solver against brute force on the engine, and
the decision's contract (legal, deterministic, bounded in nodes, not time)."""

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
    first = lasttrick.choose(pos)
    assert first in deal.legal_cards()
    assert lasttrick.choose(pos, time_limit=60.0) == first, "a generous guard changes nothing"


def test_the_node_budget_not_the_clock_decides_how_far_it_looks() -> None:
    # A slower machine (here: a solver slowed on every new node) looks at the same assignments.
    deal = trick_ten(1, follow=False)
    pos = position(deal, deal.to_move)
    fast = lasttrick.search(pos)
    original = lasttrick._PointsSolver.value

    def slow(self, me, opp, me_leads):
        if (me, opp, me_leads) not in self.memo:
            for _ in range(200):
                pass
        return original(self, me, opp, me_leads)

    lasttrick._PointsSolver.value = slow
    try:
        assert lasttrick.search(pos) == fast
    finally:
        lasttrick._PointsSolver.value = original


def test_a_zero_node_budget_still_answers_after_one_assignment() -> None:
    deal = trick_ten(4, follow=False)
    assert lasttrick.choose(position(deal, deal.to_move), nodes=0) in cards_of(deal.hands[deal.to_move])


def test_the_time_guard_cuts_and_says_so() -> None:
    deal = trick_ten(4, follow=False)
    card, cut = lasttrick.search(position(deal, deal.to_move), time_limit=0.0)
    assert cut and card in cards_of(deal.hands[deal.to_move])
    assert lasttrick.search(position(deal, deal.to_move), nodes=0, time_limit=0.0)[1] is False, (
        "the node budget stopped first: the guard changed nothing"
    )


def test_any_prefix_of_the_assignments_spreads_over_the_top_cards() -> None:
    worlds = [(top, last, 0) for top in range(4) for last in range(4) if top != last]
    order = lasttrick._interleaved(worlds)
    assert sorted(order) == sorted(worlds)
    assert [w[0] for w in order[:8]] == [0, 1, 2, 3, 0, 1, 2, 3]


def test_only_the_last_trick_of_phase_1() -> None:
    deal = Deal(Rules(), 0, deal_deck(5, 0))
    assert lasttrick.choose(position(deal, deal.to_move)) is None
