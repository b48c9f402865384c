"""The solver's public API: positions from deals and from hands, answers, and refusals."""

from __future__ import annotations

import random

import pytest
from analysis_helpers import VARIANTS, core_args, random_endgame, random_position

from arena.analysis import Position, PositionError, analyse, solve
from arena.analysis.pysolve import minimax_values
from arena.engine import Deal, Rules, parse_card


def test_pure_python_agrees_with_minimax_on_small_endgames() -> None:
    rng = random.Random(7)
    for _ in range(400):
        pos = random_position(rng, max_cards=4)
        base = pos.honours[pos.to_move]
        brute = {c: base + v for c, v in minimax_values(*core_args(pos)).items()}
        assert solve(pos, core="python") == brute, pos.describe()


def test_values_are_end_of_deal_honours_and_play_out_exactly() -> None:
    """The answers cover exactly the engine's legal cards, and following the best card for both sides
    ends the deal with the promised honours."""
    rng = random.Random(3)
    for rules in VARIANTS:
        deal = random_endgame(rng, rules, extra_plays=1)  # the follower is on move
        promised = analyse(deal, core="python")
        assert sorted(promised.values) == deal.legal_cards()
        mover = promised.mover
        while not deal.done:
            deal.play(analyse(deal, core="python").best[0])
        assert deal.honours[mover] == promised.best_value


def test_hand_built_position() -> None:
    # Seat 0 leads holding ♠A ♥7 with 9 honours; seat 1 holds ♥A ♦7. No trumps: on ♠A the follower
    # discards ♦7 (seat 0 takes 1), then ♥7 loses to ♥A: 10. Leading ♥7 loses ♥A's trick, then ♠A is a
    # discard on ♦7: 9.
    hands = (["AS", "7H"], ["AH", "7D"])
    sol = analyse(Position.from_hands(hands, leader=0, honours=(9, 7)), core="python")
    assert sol.values == {parse_card("AS"): 10, parse_card("7H"): 9}
    assert sol.best == (parse_card("AS"),) and sol.lost(parse_card("7H")) == 1
    # Hearts trumps: ♠A must be ruffed by ♥A (seat 1 takes 2), and seat 1's ♦7 is then ruffed by ♥7 (0).
    trumped = solve(Position.from_hands(hands, leader=0, honours=(9, 7), trump="H"), core="python")
    assert trumped == {parse_card("AS"): 9, parse_card("7H"): 9}


def test_follower_to_move_and_must_head() -> None:
    # ♥Q led; the follower holds ♥7 ♥A: both legal, with must_head only ♥A (docs/rules.md, example 3).
    free = Position.from_hands((["7S"], ["7H", "AH"]), leader=0, table="QH", honours=(0, 0))
    assert sorted(solve(free, core="python")) == [parse_card("7H"), parse_card("AH")]
    head = Position.from_hands((["7S"], ["7H", "AH"]), leader=0, table="QH", must_head=True)
    assert list(solve(head, core="python")) == [parse_card("AH")]


def test_refusals() -> None:
    deck = list(range(32))
    with pytest.raises(PositionError, match="stock still holds 20"):
        Position.from_deal(Deal(Rules(), 0, deck))
    with pytest.raises(PositionError, match="disjoint"):
        Position.from_hands((["AS"], ["AS"]), leader=0)
    with pytest.raises(PositionError, match="as many cards"):
        Position.from_hands((["AS", "KS"], ["7S"]), leader=0)
    with pytest.raises(PositionError, match="trumps"):
        Position.from_hands((["AS"], ["7S"]), leader=0, rules=Rules(trumps=True))
    with pytest.raises(ValueError, match="core must be one of"):
        solve(Position.from_hands((["AS"], ["7S"]), leader=0), core="fortran")


def test_finished_deal_has_no_moves() -> None:
    rng = random.Random(1)
    deal = random_endgame(rng, Rules(), extra_plays=12)
    assert deal.done and solve(deal) == {}
