"""World sampling from one seat's knowledge, and the simulator that plays worlds forward."""

from __future__ import annotations

import random

from analysis_helpers import VARIANTS, hidden_twins

from arena.analysis.worlds import Knowledge, World, sample_world
from arena.engine import Match, Rules


def _midgame(rules: Rules, seed: int, plays: int) -> Match:
    m = Match(rules, seed)
    deal = m.start_deal()
    rng = random.Random(seed)
    for _ in range(plays):
        legal = deal.legal_cards()
        m.play(legal[rng.randrange(len(legal))])
    return m


def test_sampled_worlds_agree_with_everything_the_seat_knows() -> None:
    for i, rules in enumerate(VARIANTS):
        m = _midgame(rules, seed=i, plays=2 * i + 3)
        deal = m.deal
        seat = deal.to_move
        know = Knowledge.from_view(m.view(seat), rules)
        rng = random.Random(5)
        for _ in range(20):
            w = sample_world(know, rng)
            assert w.hands[seat] == deal.hands[seat]
            assert w.hands[1 - seat].bit_count() == deal.hands[1 - seat].bit_count()
            assert len(w.stock) == deal.stock_count
            assert w.hands[1 - seat] | sum(1 << c for c in w.stock) == know.unknown | (
                1 << deal.trump_card if deal.trump_card is not None and deal.stock_count else 0
            )
            if rules.trumps:
                assert w.stock[-1] == deal.trump_card  # still under the stock: drawn last
            assert w.legal_cards() == deal.legal_cards()


def test_sampling_never_reads_hidden_cards() -> None:
    """Two deals that differ only in what the seat cannot see give the same knowledge, hence the same
    worlds from the same generator state."""
    knows = hidden_twins(Rules(trumps=True))
    assert knows[0] == knows[1]
    worlds = [sample_world(k, random.Random(9)) for k in knows]
    assert worlds[0].hands == worlds[1].hands and worlds[0].stock == worlds[1].stock


def test_opponent_cards_are_sampled_uniformly() -> None:
    rules = Rules()
    m = _midgame(rules, seed=3, plays=4)
    seat = m.deal.to_move
    know = Knowledge.from_view(m.view(seat), rules)
    hidden = bin(know.unknown).count("1")
    rng = random.Random(1)
    n = 3000
    counts = [0] * 32
    for _ in range(n):
        opp = sample_world(know, rng).hands[1 - seat]
        for c in range(32):
            counts[c] += opp >> c & 1
    expected = n * know.opponent_hand_size / hidden
    for c in range(32):
        if know.unknown >> c & 1:
            assert abs(counts[c] - expected) < 0.15 * expected
        else:
            assert counts[c] == 0


def test_world_plays_like_the_engine() -> None:
    rng = random.Random(2)
    for i, rules in enumerate(VARIANTS):
        m = _midgame(rules, seed=100 + i, plays=0)
        deal = m.deal
        w = World.from_deal(deal)
        while not deal.done:
            assert w.legal_cards() == deal.legal_cards() and w.phase == deal.phase
            card = rng.choice(deal.legal_cards())
            m.play(card)
            w.play(card)
            assert w.hands == deal.hands and w.honours == deal.honours and w.leader == deal.leader
        assert w.done
