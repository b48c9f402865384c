"""Phase 2 is solved exactly: the solver's card must be as good as the best one found by a plain
exhaustive search over the arena's own engine (an independent implementation of the rules)."""

from __future__ import annotations

import copy

import endgame
import pytest
from elfcards import Position, deal_value, parse
from selfplay import phase2_position, position

from arena.engine.deal import Deal


def utility(deal: Deal, seat: int) -> int:
    mine = deal.honours[seat]
    return deal_value(mine) * 32 + mine


def exhaustive(deal: Deal, seat: int) -> int:
    """Minimax value for `seat` by brute force on engine copies: no memo, no shared code."""
    if deal.done:
        return utility(deal, seat)
    values = []
    for card in deal.legal_cards():
        child = copy.deepcopy(deal)
        child.play(card)
        values.append(exhaustive(child, seat))
    return max(values) if deal.to_move == seat else min(values)


@pytest.mark.parametrize("seed", range(8))
def test_solver_matches_exhaustive_search(seed: int) -> None:
    deal = phase2_position(seed, tricks_left=4, follow=seed % 3 == 0)
    seat = deal.to_move
    pos = position(deal, seat)
    assert pos.phase2
    best = max(_value_of(deal, seat, c) for c in deal.legal_cards())
    chosen = endgame.solve(pos)
    assert chosen in deal.legal_cards()
    assert _value_of(deal, seat, chosen) == best


def _value_of(deal: Deal, seat: int, card: int) -> int:
    child = copy.deepcopy(deal)
    child.play(card)
    return exhaustive(child, seat)


def test_leads_the_ace_to_pull_down_the_king() -> None:
    # I hold AS 7S, the opponent KS 8H (everything else is played): AS first forces the king.
    others = frozenset(range(32)) - {parse(c) for c in ("AS", "7S", "KS", "8H")}
    hand = frozenset({parse("AS"), parse("7S")})
    pos = Position(hand=hand, legal=tuple(sorted(hand)), lead=None, seen=others, stock=0, my_points=9)
    assert endgame.solve(pos) == parse("AS")


def test_solver_declines_a_position_it_cannot_see_whole() -> None:
    hand = frozenset({parse("AS"), parse("7S")})
    pos = Position(hand=hand, legal=tuple(sorted(hand)), lead=None, seen=frozenset(), stock=0)
    assert endgame.solve(pos) is None
