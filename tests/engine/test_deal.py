"""One deal: docs/rules.md §2-§4 and §7, the worked examples, and every deal-level option."""

from __future__ import annotations

import pytest
from engine_helpers import cards, deck_with, set_phase2_position

from arena.engine import Deal, DeckError, IllegalMove, Rules, StateError, card_code, deal_deck, parse_card

C = parse_card


def test_worked_example_1_dealing_leading_drawing() -> None:
    # B (seat 1) deals; A (seat 0) is the non-dealer.
    deck = cards("AS KS 7H 8H QC JC 7D 8D TS 9S 9H TH AC")
    deck += sorted(set(range(32)) - set(deck))
    deal = Deal(Rules(), dealer=1, deck=deck)
    assert deal.hands[0].bit_count() == deal.hands[1].bit_count() == 6
    assert {card_code(c) for c in range(32) if deal.hands[0] >> c & 1} == {"AS", "KS", "QC", "JC", "TS", "9S"}
    assert {card_code(c) for c in range(32) if deal.hands[1] >> c & 1} == {"7H", "8H", "7D", "8D", "9H", "TH"}
    assert deal.stock[0] == C("AC") and deal.stock_count == 20
    assert deal.to_move == 0 and deal.leader == 0 and deal.phase == 1 and deal.trick_no == 1
    assert deal.play(C("9S")) is None
    assert deal.to_move == 1 and deal.table == C("9S")
    assert C("TH") in deal.legal_cards() and len(deal.legal_cards()) == 6  # no duty to follow in phase 1
    trick = deal.play(C("TH"))
    assert trick is not None
    assert (trick.no, trick.leader, trick.lead, trick.follow, trick.winner, trick.honours) == (
        1,
        0,
        C("9S"),
        C("TH"),
        0,
        1,
    )
    assert trick.winner_draw == C("AC") and trick.loser_draw == deck[13]
    assert deal.honours == [1, 0]
    assert deal.hands[0] >> C("AC") & 1 and deal.hands[1] >> deck[13] & 1
    assert deal.drawn == ([C("AC")], [deck[13]])
    assert deal.to_move == 0 and deal.leader == 0 and deal.trick_no == 2 and deal.stock_count == 18


@pytest.mark.parametrize(
    ("lead", "follow", "winner", "honours"),
    [("JC", "TC", 0, 2), ("TC", "JC", 1, 2), ("KD", "AD", 1, 2), ("KD", "AS", 0, 2), ("9H", "7H", 0, 0),
     ("7S", "8S", 1, 0), ("AC", "7C", 0, 1)],
)  # fmt: skip
def test_worked_example_2_trick_resolution(lead: str, follow: str, winner: int, honours: int) -> None:
    filler_non = [c for c in ("7D", "8D", "9D", "7S", "8S", "9H", "QC") if c not in (lead, follow)][:5]
    filler_dealer = [c for c in ("7H", "8H", "8C", "9C", "9S", "QH", "KC") if c not in (lead, follow)][:5]
    deck = deck_with(" ".join([lead, *filler_non]), " ".join([follow, *filler_dealer]))
    deal = Deal(Rules(), dealer=1, deck=deck)  # seat 0 leads
    deal.play(C(lead))
    trick = deal.play(C(follow))
    assert trick.winner == winner and trick.honours == honours
    assert deal.honours[winner] == honours and deal.leader == winner


def test_worked_example_3_phase2_follow_suit() -> None:
    deal = Deal(Rules(), dealer=0, deck=deal_deck(1, 0))
    set_phase2_position(deal, leader=1, leader_hand="QH 8C 9C", follower_hand="7H AH KC")
    deal.play(C("QH"))
    assert deal.phase == 2 and [card_code(c) for c in deal.legal_cards()] == ["7H", "AH"]
    with pytest.raises(IllegalMove) as err:
        deal.play(C("KC"))
    assert "phase 2: you must follow suit ♥" in str(err.value) and "legal: ♥7 ♥A" in str(err.value)
    assert err.value.legal == [C("7H"), C("AH")] and err.value.card == C("KC")
    assert deal.hands[0] >> C("KC") & 1  # nothing changed
    assert deal.play(C("7H")).winner == 1


def test_worked_example_3_must_head_phase2() -> None:
    deal = Deal(Rules(must_head_phase2=True), dealer=0, deck=deal_deck(1, 0))
    set_phase2_position(deal, leader=1, leader_hand="QH 8C 9C", follower_hand="7H AH KC")
    deal.play(C("QH"))
    assert [card_code(c) for c in deal.legal_cards()] == ["AH"]
    with pytest.raises(IllegalMove, match="must beat ♥Q with a higher ♥"):
        deal.play(C("7H"))
    assert deal.play(C("AH")).winner == 0


def test_must_head_when_unable_to_beat_allows_any_card_of_the_suit() -> None:
    deal = Deal(Rules(must_head_phase2=True), dealer=0, deck=deal_deck(1, 0))
    set_phase2_position(deal, leader=1, leader_hand="AH 8C", follower_hand="7H 9H KC")
    deal.play(C("AH"))
    assert [card_code(c) for c in deal.legal_cards()] == ["7H", "9H"]


def test_worked_example_3_unable_to_follow_anything_goes_and_loses() -> None:
    deal = Deal(Rules(), dealer=0, deck=deal_deck(1, 0))
    set_phase2_position(deal, leader=1, leader_hand="QH 8C", follower_hand="KC 7S")
    deal.play(C("QH"))
    assert [card_code(c) for c in deal.legal_cards()] == ["KC", "7S"]
    trick = deal.play(C("KC"))
    assert trick.winner == 1 and trick.honours == 2 and deal.honours == [0, 2]
    assert trick.winner_draw is None and trick.loser_draw is None


def test_phase1_has_no_duty_to_follow_even_with_must_head() -> None:
    deal = Deal(
        Rules(must_head_phase2=True), dealer=1, deck=deck_with("AH 7C 8C 9C 7D 8D", "KH 9H 7S 8S 9S TS")
    )
    deal.play(C("7C"))
    assert len(deal.legal_cards()) == 6


@pytest.mark.parametrize("hand_size", [6, 5, 4])
def test_packets_and_stock_for_each_hand_size(hand_size: int) -> None:
    deck = deal_deck(9, 0)
    deal = Deal(Rules(hand_size=hand_size), dealer=0, deck=deck)
    packets = {6: [2, 2, 2], 5: [2, 2, 1], 4: [2, 2]}[hand_size]
    pos, non, dealer = 0, [], []
    for size in packets:
        non += deck[pos : pos + size]
        dealer += deck[pos + size : pos + 2 * size]
        pos += 2 * size
    assert deal.hands[1] == sum(1 << c for c in non)  # seat 1 is the non-dealer
    assert deal.hands[0] == sum(1 << c for c in dealer)
    assert deal.stock == list(deck[2 * hand_size :]) and deal.stock_count == 32 - 2 * hand_size


def test_trumps_variant_turns_the_top_stock_card_to_the_bottom() -> None:
    deck = deal_deck(4, 0)
    deal = Deal(Rules(trumps=True), dealer=0, deck=deck)
    assert deal.trump_card == deck[12] and deal.trump_suit == deck[12] >> 3
    assert deal.stock == list(deck[13:]) + [deck[12]]
    rng = __import__("random").Random(0)
    while deal.phase == 1:
        deal.play(rng.choice(deal.legal_cards()))
    last_phase1 = deal.tricks[9]
    assert last_phase1.loser_draw == deck[12]  # the turned trump goes to the loser of trick 10
    assert deal.drawn[1 - last_phase1.winner][-1] == deck[12]


def test_trump_beats_other_suits_in_both_phases() -> None:
    # trumps = spades: the stock's top card (c13) is a spade.
    deck = deck_with("7H 7C 8C 9C 7D 8D", "7S KH 9H 8H TD JD", stock="AS")
    deal = Deal(Rules(trumps=True), dealer=1, deck=deck)
    assert deal.trump_suit == 3
    deal.play(C("7H"))
    assert deal.play(C("7S")).winner == 1  # a low trump beats a non-trump in phase 1
    # phase 2: cannot follow suit -> must play a trump; a trump wins
    deal2 = Deal(Rules(trumps=True), dealer=1, deck=deck)
    set_phase2_position(deal2, leader=0, leader_hand="AH 8C", follower_hand="7S KC QD")
    deal2.play(C("AH"))
    assert [card_code(c) for c in deal2.legal_cards()] == ["7S"]
    with pytest.raises(IllegalMove, match="cannot follow suit ♥, so you must play a trump ♠"):
        deal2.play(C("KC"))
    assert deal2.play(C("7S")).winner == 1


def test_trumps_phase2_no_duty_to_overtrump_unless_must_head() -> None:
    deck = deck_with("7H 7C 8C 9C 7D 8D", "7S KH 9H 8H TD JD", stock="AS")
    for must_head, legal in ((False, ["7S", "KS"]), (True, ["KS"])):
        deal = Deal(Rules(trumps=True, must_head_phase2=must_head), dealer=1, deck=deck)
        set_phase2_position(deal, leader=0, leader_hand="9S 8C", follower_hand="7S KS QD")
        deal.play(C("9S"))
        assert [card_code(c) for c in deal.legal_cards()] == legal


def test_trump_lead_is_not_beaten_by_a_higher_other_suit() -> None:
    deck = deck_with("7S 7C 8C 9C 7D 8D", "AH KH 9H 8H TD JD", stock="AS")
    deal = Deal(Rules(trumps=True), dealer=1, deck=deck)
    deal.play(C("7S"))
    assert deal.play(C("AH")).winner == 0


def test_illegal_cards_change_nothing_and_say_why() -> None:
    deal = Deal(Rules(deck="german"), dealer=1, deck=deck_with("AS KS QC JC TS 9S", "7H 8H 7D 8D 9H TH"))
    with pytest.raises(IllegalMove) as err:
        deal.play(C("7H"))
    assert "Herz 7 is not in your hand" in str(err.value) and "Grün Daus" in str(err.value)
    with pytest.raises(IllegalMove, match="not a card"):
        deal.play(99)
    with pytest.raises(IllegalMove, match="not a card"):
        deal.play("AS")  # type: ignore[arg-type]
    assert deal.plays == [] and deal.to_move == 0


def test_bad_decks() -> None:
    with pytest.raises(DeckError, match=r"missing ♠A"):
        Deal(Rules(), 0, list(range(31)))
    with pytest.raises(DeckError, match=r"twice ♣7"):
        Deal(Rules(), 0, [0] + list(range(31)))
    with pytest.raises(DeckError, match="not a card"):
        Deal(Rules(), 0, [1.0] + list(range(1, 32)))  # type: ignore[list-item]
    with pytest.raises(DeckError):
        Deal(Rules(), 0, [float(c) for c in range(32)])  # type: ignore[misc]


def test_play_after_the_end_is_a_state_error() -> None:
    deal = Deal(Rules(), 0, deal_deck(2, 0))
    deal.playout(__import__("random").Random(0))
    with pytest.raises(StateError):
        deal.play(0)
    assert deal.legal_cards() == [] and deal.to_move is None and deal.trick_no == 16
