"""The world sampler: every sampled world gives the seat exactly the view it has (byte for byte), in
every variant and at every point of a deal, and the hidden cards really are spread among worlds."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from arena.analysis.worlds import Knowledge, WorldError, sample_deal
from arena.engine import Match, Rules
from arena.engine.cards import cards_of
from arena.engine.view import build_view

VARIANTS = [
    Rules(),
    Rules(trumps=True),
    Rules(hand_size=5, trumps=True),
    Rules(hand_size=4, must_head_phase2=True),
    Rules(trumps=True, must_head_phase2=True),
]


def _positions(rules: Rules, seed: int):
    """A match's first deal played at random, yielding (match, remembered trump card) before each card."""
    rng = random.Random(seed)
    match = Match(rules, seed)
    deal = match.start_deal()
    trump = deal.trump_card
    while not deal.done:
        yield match, trump
        match.play(rng.choice(deal.legal_cards()))


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: str(r.changed() or "default"))
def test_every_world_gives_the_same_view(rules: Rules) -> None:
    rng = random.Random(3)
    for seed in range(6):
        for match, trump in _positions(rules, seed):
            for seat in (0, 1):
                view = build_view(match, seat)
                k = Knowledge.from_engine_view(view, rules, trump)
                world = sample_deal(k, rng)
                twin = Match(rules, seed)
                twin.deal = world
                assert build_view(twin, seat).to_json() == view.to_json()
                assert world.trump_card == match.deal.trump_card
                if view.phase == 2:  # nothing is hidden any more: the one world is the real one
                    assert world.hands == match.deal.hands


def test_hidden_cards_spread_evenly() -> None:
    """After the first card of a deal, each unseen card lands in the opponent's hand about 6 times in 25."""
    match = Match(Rules(), 7)
    deal = match.start_deal()
    match.play(deal.legal_cards()[0])
    k = Knowledge.from_engine_view(build_view(match, deal.to_move), Rules())
    unseen = cards_of(k.unseen)
    assert len(unseen) == 25
    counts = dict.fromkeys(unseen, 0)
    rng = random.Random(5)
    n = 2000
    for _ in range(n):
        world = sample_deal(k, rng)
        for c in cards_of(world.hands[1 - k.seat]):
            counts[c] += 1
    expected = n * 5 / 25  # the leader's hand holds 5 cards after it led
    assert all(abs(v - expected) < 0.25 * expected for v in counts.values()), counts


def test_same_generator_same_world_and_bad_knowledge_refused() -> None:
    match = Match(Rules(trumps=True), 2)
    match.start_deal()
    view = build_view(match, 0)
    k = Knowledge.from_engine_view(view, Rules(trumps=True))
    assert sample_deal(k, random.Random(9)).deck == sample_deal(k, random.Random(9)).deck
    with pytest.raises(WorldError, match="trump card is needed"):
        sample_deal(replace(k, trump_card=None), random.Random(1))
    with pytest.raises(WorldError, match="a stock of 18"):
        sample_deal(replace(k, stock_count=18), random.Random(1))
    with pytest.raises(WorldError, match="both in hand and played"):
        sample_deal(replace(k, table=cards_of(k.hand)[0], leader=1), random.Random(1))
