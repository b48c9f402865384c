"""Hypothesis properties of random deals under every deal-level option (issue 2 §4)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import Deal, Match, Rules, cards_of, deal_deck

rules_strategy = st.builds(
    Rules,
    hand_size=st.sampled_from([6, 5, 4]),
    trumps=st.booleans(),
    must_head_phase2=st.booleans(),
    scoring=st.sampled_from(["tendler", "altenburg"]),
)
seeds = st.integers(min_value=0, max_value=2**64 - 1)


def reference_legal(
    hand: list[int], lead: int | None, phase: int, rules: Rules, trump: int | None
) -> list[int]:
    """docs/rules.md §3 and §7 written plainly with lists, to check the bitmask engine against."""
    if lead is None or phase == 1:
        return sorted(hand)
    same = [c for c in hand if c // 8 == lead // 8]
    if same:
        higher = [c for c in same if c % 8 > lead % 8]
        return sorted(higher) if rules.must_head_phase2 and higher else sorted(same)
    if rules.trumps:
        trumps = [c for c in hand if c // 8 == trump]
        if trumps:
            return sorted(trumps)
    return sorted(hand)


@settings(max_examples=150, deadline=None)
@given(rules=rules_strategy, seed=seeds, dealer=st.sampled_from([0, 1]), policy=st.integers(0, 2**32))
def test_random_deal_invariants(rules: Rules, seed: int, dealer: int, policy: int) -> None:
    h = rules.hand_size
    phase1 = 16 - h  # docs/rules.md §7: phase 1 lasts (32 - 2h) / 2 tricks
    deal = Deal(rules, dealer, deal_deck(seed, 0))
    rng = random.Random(policy)
    plays = 0
    while not deal.done:
        trick_no = deal.trick_no
        if deal.table is None:  # the start of a trick
            assert deal.stock_count == max(0, 32 - 2 * h - 2 * (trick_no - 1))
            assert deal.phase == (1 if trick_no <= phase1 else 2)
            expected_size = h if trick_no <= phase1 else 16 - trick_no + 1
            assert deal.hands[0].bit_count() == deal.hands[1].bit_count() == expected_size
            assert deal.to_move == deal.leader
        legal = deal.legal_cards()
        hand = cards_of(deal.hands[deal.to_move])
        assert legal == reference_legal(hand, deal.table, deal.phase, rules, deal.trump_suit)
        trick = deal.play(rng.choice(legal))
        plays += 1
        if trick is not None:
            drew = trick.winner_draw is not None
            assert drew == (trick.no <= phase1)
            if trick.no == phase1:
                assert deal.stock_count == 0  # the loser of the last phase-1 trick takes the last card
                if rules.trumps:
                    assert trick.loser_draw == deal.trump_card
    assert plays == 32 and len(deal.tricks) == 16  # every deal ends when all cards are played
    assert deal.hands == [0, 0] and deal.stock_count == 0
    out = deal.outcome
    assert sum(out.honours) == 20
    assert sum(t.honours for t in deal.tricks) == 20
    if out.honours[0] == out.honours[1]:
        assert out.winner is None and out.lines == (0, 0)
    else:
        w = 0 if out.honours[0] > out.honours[1] else 1
        assert out.winner == w and out.lines[w] == rules.deal_value(out.honours[w]) and out.lines[1 - w] == 0
    # every card was played exactly once
    assert sorted(deal.plays) == list(range(32))


@settings(max_examples=60, deadline=None)
@given(seed=seeds, flags=st.integers(1, 3), standoff=st.sampled_from(["double", "pot"]),
       next_dealer=st.sampled_from(["winner", "loser", "alternate"]), policy=st.integers(0, 2**32))  # fmt: skip
def test_random_match_invariants(seed: int, flags: int, standoff: str, next_dealer: str, policy: int) -> None:
    m = Match(Rules(flags=flags, standoff=standoff, next_dealer=next_dealer), seed)
    rng = random.Random(policy)
    while not m.over:
        deal = m.start_deal()
        if rng.random() < 0.5:
            m.playout(rng)
        while not deal.done:
            m.play(rng.choice(deal.legal_cards()))
    assert m.lines == [sum(s.lines[0] for s in m.deals), sum(s.lines[1] for s in m.deals)]
    # lines can jump past a flag (a doubled deal), so the winner has at least `flags` flags
    assert max(m.flags) >= flags > min(m.flags) and m.winner == m.flags.index(max(m.flags))
    before_last = [m.lines[s] - m.deals[-1].lines[s] for s in (0, 1)]
    assert max(before_last) < 4 * flags  # ... and the match did not go on after a flag was reached
    assert all(s.outcome.multiplier in (1, 2) for s in m.deals)
