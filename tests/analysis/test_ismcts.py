"""ISMCTS over phase 1: the compiled core and its pure-Python twin give the same visits and rewards from
the same seed, every iteration lands on a legal root card, and the search never reads hidden cards."""

from __future__ import annotations

import random

import pytest
from analysis_helpers import VARIANTS, hidden_twins

from arena.analysis.ismcts import search
from arena.analysis.worlds import Knowledge
from arena.bench.peek import true_order
from arena.engine import Match, Rules


def _knowledge(rules: Rules, seed: int) -> list[tuple[list[int], Knowledge]]:
    """The mover's legal cards and knowledge at every phase-1 turn of a random deal, leads and follows."""
    m = Match(rules, seed)
    deal = m.start_deal()
    rng = random.Random(seed)
    out = []
    while deal.stock_count:
        out.append((deal.legal_cards(), Knowledge.from_view(m.view(deal.to_move), rules)))
        m.play(rng.choice(deal.legal_cards()))
    return out


def test_the_core_and_its_twin_search_alike() -> None:
    for v, rules in enumerate(VARIANTS):
        for i, (_, k) in enumerate(_knowledge(rules, v)):
            if i % 3 == v % 3:  # a third of the turns: the twin solves phase 2 in Python, slowly
                seed = 2**63 + 9 * i + v
                depth = (2, 4, 32)[v % 3]
                c = search(k, seed, 60, 0.7, 0.3, depth, which="c")
                assert c == search(k, seed, 60, 0.7, 0.3, depth, which="python"), (rules, i)


def test_every_iteration_ends_on_a_legal_root_card_with_a_reward_in_range() -> None:
    for v, rules in enumerate(VARIANTS):
        for legal, k in _knowledge(rules, 20 + v):
            stats = search(k, 5, 200, 0.7, 0.3)
            assert set(stats) == set(legal)
            assert sum(visits for visits, _ in stats.values()) == 200
            assert all(0 <= reward <= visits for visits, reward in stats.values())


def test_the_seed_sets_the_search_and_hidden_cards_do_not() -> None:
    """Two deals that differ only in cards the mover cannot see give the same search; another seed,
    another search."""
    knows = hidden_twins(Rules(trumps=True))
    assert search(knows[0], 3, 500, 0.7, 0.3) == search(knows[1], 3, 500, 0.7, 0.3)
    assert search(knows[0], 3, 500, 0.7, 0.3) != search(knows[0], 4, 500, 0.7, 0.3)


def test_phase_two_is_refused() -> None:
    m = Match(Rules(), 2)
    deal = m.start_deal()
    while deal.stock_count:
        m.play(deal.legal_cards()[0])
    with pytest.raises(ValueError, match="phase 1"):
        search(Knowledge.from_view(m.view(deal.to_move), Rules()), 1, 10, 0.7, 0.3)


def _peeks(rules: Rules, seed: int) -> list[tuple[Knowledge, list[int]]]:
    m = Match(rules, seed)
    deal = m.start_deal()
    rng = random.Random(seed)
    out = []
    while deal.stock_count:
        k = Knowledge.from_view(m.view(deal.to_move), rules)
        out.append((k, true_order(deal, k.seat)))
        m.play(rng.choice(deal.legal_cards()))
    return out


def test_a_peeking_search_is_the_same_in_the_core_and_its_twin() -> None:
    for v, rules in enumerate(VARIANTS):
        for i, (k, order) in enumerate(_peeks(rules, 40 + v)):
            if i % 4 == v % 4:
                for peek in ("hand", "all"):
                    c = search(k, 7 + i, 40, 0.7, 0.3, 32, "c", peek, order)
                    assert c == search(k, 7 + i, 40, 0.7, 0.3, 32, "python", peek, order), (rules, i, peek)


def test_what_a_search_sees_of_the_hidden_cards_changes_its_answer() -> None:
    """Without a peek the order given is not read; with one, the true places of the cards count: the
    whole order for "all", and for "hand" which cards the opponent holds."""
    k, order = _peeks(Rules(), 3)[4]
    other = order[::-1]  # the same cards, another opponent's hand and stock
    assert search(k, 1, 300, 0.7, 0.3) == search(k, 1, 300, 0.7, 0.3, order=other)
    assert search(k, 1, 300, 0.7, 0.3, peek="all", order=order) != search(
        k, 1, 300, 0.7, 0.3, peek="all", order=other
    )
    assert search(k, 1, 300, 0.7, 0.3, peek="hand", order=order) != search(k, 1, 300, 0.7, 0.3)


def test_a_peek_needs_every_unknown_card_once() -> None:
    k, order = _peeks(Rules(), 5)[2]
    with pytest.raises(ValueError, match="every unknown card once"):
        search(k, 1, 10, 0.7, 0.3, peek="all", order=order[:-1])
    with pytest.raises(ValueError, match="every unknown card once"):
        search(k, 1, 10, 0.7, 0.3, peek="hand", order=[*order[:-1], order[0]])
    with pytest.raises(ValueError, match="peek must be one of"):
        search(k, 1, 10, 0.7, 0.3, peek="stock", order=order)
