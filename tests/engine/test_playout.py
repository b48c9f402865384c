"""Deal.playout is a fast path: every card it plays must be legal, each legal card equally likely."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from engine_helpers import set_phase2_position

from arena.engine import Deal, Match, Rules, card_code, deal_deck
from arena.engine.deal import pick_card

VARIANTS = [
    Rules(),
    Rules(hand_size=5),
    Rules(hand_size=4),
    Rules(trumps=True),
    Rules(must_head_phase2=True),
    Rules(trumps=True, must_head_phase2=True, hand_size=5),
]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: str(r.changed() or "default"))
@pytest.mark.parametrize("prefix", [0, 1, 7, 20, 31])
def test_playout_plays_only_legal_cards_and_scores_like_play(rules: Rules, prefix: int) -> None:
    for seed in range(15):
        deck = deal_deck(seed, 0)
        fast = Deal(rules, seed & 1, deck)
        pre = random.Random(seed)
        for _ in range(prefix):  # start part-way through, even mid-trick
            fast.play(pick_card(fast.legal_mask(), pre))
        outcome = fast.playout(random.Random(1000 + seed))
        slow = Deal(rules, seed & 1, deck)
        for card in fast.plays:
            slow.play(card)  # raises IllegalMove if the playout broke a rule
        assert fast.tricks == slow.tricks and outcome == slow.outcome
        assert fast.hands == slow.hands == [0, 0] and fast.drawn == slow.drawn
        assert (fast.done, fast.to_move, fast.trick_no, fast.stock_count) == (True, None, 16, 0)


def test_same_random_sequence_same_deal() -> None:
    deck = deal_deck(8, 0)
    a, b = Deal(Rules(), 0, deck), Deal(Rules(), 0, deck)
    a.playout(random.Random(4))
    b.playout(random.Random(4))
    assert a.plays == b.plays
    c = Deal(Rules(), 0, deck)
    c.playout(random.Random(5))
    assert c.plays != a.plays


def _spread(deal_factory, pick, runs: int = 3000) -> Counter:
    counts: Counter = Counter()
    rng = random.Random(0)
    for _ in range(runs):
        deal = deal_factory()
        deal.playout(rng)
        counts[card_code(pick(deal))] += 1
    return counts


def test_leads_are_uniform_in_phase_1() -> None:
    deck = deal_deck(3, 0)
    counts = _spread(lambda: Deal(Rules(), 0, deck), lambda d: d.tricks[0].lead, runs=6000)
    assert len(counts) == 6 and all(800 < n < 1200 for n in counts.values()), counts


@pytest.mark.parametrize(
    ("rules", "follower", "expected"),
    [
        (Rules(), "7H AH KC", {"7H", "AH"}),  # must follow suit
        (Rules(trumps=True), "7S 8S KC", {"7S", "8S"}),  # cannot follow: must trump (spades)
        (Rules(), "7S 8S KC", {"7S", "8S", "KC"}),  # cannot follow, no trumps: anything
    ],
)
def test_phase2_follows_are_legal_and_uniform(rules: Rules, follower: str, expected: set[str]) -> None:
    deck = deal_deck(1, 0)
    while rules.trumps and deck[12] >> 3 != 3:  # make spades trumps: the turned card is c13
        deck = deck[1:] + deck[:1]

    def factory() -> Deal:
        deal = Deal(rules, 0, deck)
        set_phase2_position(deal, leader=1, leader_hand="QH 8H 9H", follower_hand=follower)
        return deal

    counts = _spread(factory, lambda d: d.tricks[0].follow)
    assert set(counts) == expected, counts
    share = 3000 / len(expected)
    assert all(0.85 * share < n < 1.15 * share for n in counts.values()), counts


def test_match_playout_scores_the_deal() -> None:
    m = Match(Rules(flags=3), 5)
    m.start_deal()
    outcome = m.playout(random.Random(0))
    assert m.deals[-1].outcome == outcome and not m.in_deal
    assert m.lines == list(outcome.lines)


def test_playout_on_a_finished_deal_returns_its_outcome() -> None:
    deal = Deal(Rules(), 0, deal_deck(3, 0))
    first = deal.playout(random.Random(1))
    assert deal.playout(random.Random(2)) == first
