"""View invariance (docs/rules.md §8, docs/architecture.md): resample what a seat cannot know; its view bytes stay the same.

The hidden cards are the opponent's current hand and the undrawn stock (the face-up trump excepted).
We permute exactly those among their deck positions, replay the same cards, and keep the samples in
which the opponent's recorded plays are still legal (a failure to follow suit in phase 2 proves a void,
so samples contradicting it are not consistent with what the seat has seen).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import IllegalMove, Match, Rules, card_code, deal_deck


def replay(rules: Rules, deck: list[int], dealer: int, plays: list[int]) -> Match:
    m = Match(rules, seed=0)
    m.start_deal(deck=deck, dealer=dealer)
    for card in plays:
        m.play(card)
    return m


def hidden_positions(m: Match, seat: int) -> list[int]:
    deal = m.deal
    hidden = deal.hands[1 - seat] | sum(1 << c for c in deal.stock)
    if deal.trump_card is not None:
        hidden &= ~(1 << deal.trump_card)
    return [pos for pos, card in enumerate(deal.deck) if hidden >> card & 1]


def resample(deck: list[int], positions: list[int], rng: random.Random) -> list[int]:
    cards = [deck[p] for p in positions]
    rng.shuffle(cards)
    new = list(deck)
    for p, c in zip(positions, cards, strict=True):
        new[p] = c
    return new


@settings(max_examples=120, deadline=None)
@given(
    seed=st.integers(0, 2**64 - 1),
    stop=st.integers(0, 32),
    seat=st.sampled_from([0, 1]),
    rules=st.builds(Rules, hand_size=st.sampled_from([6, 5, 4]), trumps=st.booleans(),
                    must_head_phase2=st.booleans()),
    policy=st.integers(0, 2**32),
)  # fmt: skip
def test_view_bytes_do_not_depend_on_hidden_cards(
    seed: int, stop: int, seat: int, rules: Rules, policy: int
) -> None:
    deck = deal_deck(seed, 0)
    dealer = seed & 1
    m = Match(rules, seed=0)
    deal = m.start_deal(deck=deck, dealer=dealer)
    rng = random.Random(policy)
    plays: list[int] = []
    while len(plays) < stop and not deal.done:
        card = rng.choice(deal.legal_cards())
        m.play(card)
        plays.append(card)
    original = m.view(seat).to_json()
    positions = hidden_positions(m, seat)
    for _ in range(12):
        other = resample(deck, positions, rng)
        try:
            twin = replay(rules, other, dealer, plays)
        except IllegalMove:
            continue  # contradicts a void the opponent revealed
        assert twin.view(seat).to_json() == original


def test_resampling_really_changes_the_hidden_state() -> None:
    """Guards the property above against being vacuous: the opponent, who holds the cards, sees a change."""
    for seed in range(10):
        deck = deal_deck(seed, 0)
        m = replay(Rules(), deck, 0, [])
        rng = random.Random(seed)
        for _ in range(7):
            m.play(rng.choice(m.deal.legal_cards()))
        plays = m.deal.plays
        positions = hidden_positions(m, 0)
        twin = replay(Rules(), resample(deck, positions, random.Random(1)), 0, plays)
        assert twin.view(0).to_json() == m.view(0).to_json()
        assert twin.view(1).to_json() != m.view(1).to_json()


def test_view_hides_what_it_must_and_shows_what_it_may() -> None:
    m = Match(Rules(trumps=True), seed=5)
    deal = m.start_deal()
    v = m.view(deal.to_move)
    d = v.to_dict()
    assert set(d) == {
        "seat", "status", "deal_index", "dealer", "leader", "to_move", "phase", "trick_no", "hand", "table",
        "tricks", "stock_count", "drawn", "trump_card", "trump_suit", "honours", "opponent_hand_size", "legal",
        "lines", "flags", "multiplier", "pot", "match_winner",
    }  # fmt: skip
    assert d["legal"] == d["hand"] and len(d["hand"]) == 6 and d["opponent_hand_size"] == 6
    assert d["stock_count"] == 20 and d["trump_card"] is not None and d["status"] == "playing"
    other = m.view(1 - deal.to_move).to_dict()
    assert other["legal"] == [] and set(other["hand"]).isdisjoint(d["hand"])
    blob = m.view(0).to_json()
    for card in deal.stock[:-1]:  # the face-down stock never appears
        assert f'"{card_code(card)}"'.encode() not in blob
    rng = random.Random(1)
    while deal.stock_count:
        m.play(rng.choice(deal.legal_cards()))
    assert m.view(0).trump_card is None and m.view(0).trump_suit == deal.trump_suit


def test_view_before_and_between_deals() -> None:
    m = Match(Rules(), seed=6)
    v = m.view(0)
    assert v.status == "before_deal" and v.hand == () and v.dealer == m.dealer and v.to_move is None
    m.start_deal()
    m.playout(random.Random(0))
    v = m.view(1)
    assert v.status == "deal_over" and v.to_move is None and v.legal == () and len(v.tricks) == 16
    assert v.lines == tuple(m.lines) and sum(v.honours) == 20
    while not m.over:
        m.start_deal()
        m.playout(random.Random(len(m.deals)))
    assert m.view(0).status == "match_over" and m.view(0).match_winner == m.winner
