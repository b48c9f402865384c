"""Deal.playout is a fast path: it must give exactly the deal that card-by-card play gives."""

from __future__ import annotations

import random

import pytest

from arena.engine import Deal, Rules, deal_deck
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
def test_playout_equals_card_by_card_play(rules: Rules, prefix: int) -> None:
    for seed in range(15):
        deck = deal_deck(seed, 0)
        fast, slow = Deal(rules, seed & 1, deck), Deal(rules, seed & 1, deck)
        pre = random.Random(seed)
        for _ in range(prefix):  # start the playout from a position part-way through, even mid-trick
            card = pick_card(fast.legal_mask(), pre.random)
            fast.play(card)
            slow.play(card)
        fast_rng, slow_rng = random.Random(1000 + seed), random.Random(1000 + seed)
        outcome = fast.playout(fast_rng.random)
        while not slow.done:
            slow.play(pick_card(slow.legal_mask(), slow_rng.random))
        assert fast.tricks == slow.tricks
        assert outcome == slow.outcome
        assert fast.hands == slow.hands == [0, 0]
        assert fast.plays == slow.plays and fast.drawn == slow.drawn
        assert (fast.done, fast.to_move, fast.trick_no, fast.stock_count) == (True, None, 16, 0)


def test_playout_on_a_finished_deal_returns_its_outcome() -> None:
    deal = Deal(Rules(), 0, deal_deck(3, 0))
    first = deal.playout(random.Random(1).random)
    assert deal.playout(random.Random(2).random) == first
