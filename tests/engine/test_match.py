"""The match: lines and flags, the Ständer (double or pot, never 4), who deals, max_deals, records."""

from __future__ import annotations

import random

import pytest
from engine_helpers import play_deal_where, play_random_deal, tie, won_by

from arena.engine import Match, Rules, StateError, dealer_draw


def test_winner_marks_the_deal_value_and_deals_next() -> None:
    m = Match(Rules(flags=5), seed=3)
    first_dealer = m.dealer
    play_deal_where(m, won_by(first_dealer))
    s = m.deals[0]
    assert s.dealer == first_dealer and s.winner == first_dealer
    assert m.lines[first_dealer] == s.lines[first_dealer] == Rules().deal_value(max(s.honours))
    assert m.dealer == first_dealer and m.dealer_is_fixed
    play_deal_where(m, won_by(1 - first_dealer))
    assert m.dealer == 1 - first_dealer and m.deals[1].dealer == first_dealer


@pytest.mark.parametrize(
    ("rule", "expected"),
    [("winner", lambda w, d: w), ("loser", lambda w, d: 1 - w), ("alternate", lambda w, d: 1 - d)],
)
def test_next_dealer_options(rule: str, expected) -> None:
    m = Match(Rules(next_dealer=rule, flags=20), seed=5)
    for k in range(6):
        play_deal_where(m, won_by(k % 2) if k < 3 else won_by(0))
        last = m.deals[-1]
        assert m.dealer == expected(last.winner, last.dealer) and m.dealer_is_fixed
        assert last.dealer_draws is None or len(m.deals) == 1


def test_standoff_double_and_never_four() -> None:
    m = Match(Rules(flags=50, dealer_after_tie="same"), seed=11)
    play_deal_where(m, tie)
    assert m.deals[-1].lines == (0, 0) and m.multiplier == 2
    play_deal_where(m, tie)
    assert m.multiplier == 2  # a second Ständer does not make it 4
    play_deal_where(m, won_by(0))
    last = m.deals[-1]
    assert last.outcome.multiplier == 2 and last.lines[0] == 2 * last.outcome.value
    assert m.lines == [2 * last.outcome.value, 0] and m.multiplier == 1
    play_deal_where(m, won_by(1))
    assert m.deals[-1].lines[1] == m.deals[-1].outcome.value  # back to single value


def test_standoff_pot() -> None:
    m = Match(Rules(flags=50, standoff="pot", dealer_after_tie="same"), seed=12)
    play_deal_where(m, tie)
    play_deal_where(m, tie)
    assert m.pot == 2 and m.multiplier == 1
    play_deal_where(m, won_by(1))
    last = m.deals[-1]
    assert last.outcome.pot == 2 and last.lines == (0, last.outcome.value + 2)
    assert m.pot == 0


def test_dealer_after_tie_same_keeps_the_dealer() -> None:
    m = Match(Rules(dealer_after_tie="same", flags=9), seed=13)
    play_deal_where(m, tie)
    assert m.dealer == m.deals[0].dealer and m.dealer_is_fixed


def test_dealer_after_tie_draw_uses_the_seeded_draw_of_the_next_deal() -> None:
    for seed in range(20):
        m = Match(Rules(flags=9), seed=seed)
        play_deal_where(m, tie)
        dealer, draws = dealer_draw(seed, 1)
        assert m.dealer == dealer and not m.dealer_is_fixed
        deal = m.start_deal()
        assert deal.dealer == dealer
        play_deal_where_finish(m)
        assert m.deals[1].dealer_draws == tuple(draws)


def play_deal_where_finish(m: Match) -> None:
    deal = m.deal
    deal_rng = random.Random(0)
    while not deal.done:
        m.play(deal_rng.choice(deal.legal_cards()))


def test_first_dealer_draw_is_recorded() -> None:
    m = Match(Rules(), seed=77)
    dealer, draws = dealer_draw(77, 0)
    assert m.dealer == dealer and m.first_dealer_draws == draws and not m.dealer_is_fixed
    play_random_deal(m, random.Random(1))
    assert m.deals[0].dealer_draws == tuple(draws)


@pytest.mark.parametrize("flags", [1, 2])
def test_flags_end_the_match(flags: int) -> None:
    m = Match(Rules(flags=flags), seed=21)
    rng = random.Random(21)
    while not m.over:
        play_random_deal(m, rng)
    assert max(m.lines) >= 4 * flags and max(m.flags) >= flags
    assert m.winner == (0 if m.lines[0] > m.lines[1] else 1)
    assert max(m.lines[0] - m.deals[-1].lines[0], m.lines[1] - m.deals[-1].lines[1]) < 4 * flags
    with pytest.raises(StateError, match="match is over"):
        m.start_deal()


def test_max_deals_plays_exactly_that_many_deals_and_ignores_flags() -> None:
    m = Match(Rules(max_deals=7), seed=2)
    rng = random.Random(2)
    while not m.over:
        play_random_deal(m, rng)
    assert len(m.deals) == 7
    a, b = m.lines
    assert m.winner == (None if a == b else (0 if a > b else 1))


def test_max_deals_draw() -> None:
    m = Match(Rules(max_deals=1), seed=4)
    play_deal_where(m, tie)
    assert m.over and m.winner is None and m.lines == [0, 0]


def test_a_given_dealer_must_follow_the_rules_when_they_fix_it() -> None:
    m = Match(Rules(flags=9), seed=8)
    play_deal_where(m, won_by(0))
    with pytest.raises(StateError, match="seat 1 cannot deal deal 2: seat 0 deals"):
        m.start_deal(dealer=1)
    assert m.start_deal(dealer=0).dealer == 0


def test_a_given_dealer_replaces_a_draw() -> None:
    m = Match(Rules(), seed=8)
    other = 1 - m.dealer
    assert m.start_deal(dealer=other).dealer == other
    play_deal_where_finish(m)
    assert m.deals[0].dealer_draws is None


def test_state_errors() -> None:
    m = Match(Rules(), seed=1)
    with pytest.raises(StateError, match="start_deal"):
        m.play(0)
    m.start_deal()
    with pytest.raises(StateError, match="still being played"):
        m.start_deal()


def test_same_seed_same_match_and_duplicate_decks() -> None:
    def run(seed: int) -> list:
        m = Match(Rules(flags=2), seed=seed)
        rng = random.Random(99)
        while not m.over:
            play_random_deal(m, rng)
        return [(s.dealer, s.deck, s.plays, s.outcome) for s in m.deals]

    assert run(31) == run(31)
    assert run(31) != run(32)
    # The deck of deal k depends on (seed, k) only, not on what happened before.
    a, b = Match(Rules(flags=5), 31), Match(Rules(flags=5), 31)
    play_random_deal(a, random.Random(1))
    play_random_deal(b, random.Random(2))
    assert a.deals[0].plays != b.deals[0].plays
    assert a.start_deal().deck == b.start_deal().deck
