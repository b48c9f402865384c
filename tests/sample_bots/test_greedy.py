"""Greedy: wins honours when that is cheap."""

from __future__ import annotations

from greedy_strategy import choose


def test_beats_a_led_honour_with_its_lowest_winner() -> None:
    assert choose(["7H", "QS", "AS"], lead="JS") == "QS"


def test_does_not_waste_a_card_on_a_blank_lead() -> None:
    assert choose(["8H", "9D", "KH"], lead="7H") == "9D"


def test_throws_a_blank_before_an_honour_when_it_cannot_win() -> None:
    assert choose(["KD", "8C", "TC"], lead="AH") == "8C"


def test_leads_an_ace_then_the_lowest_blank() -> None:
    assert choose(["7C", "AD", "KS"]) == "AD"
    assert choose(["9C", "7D", "KS"]) == "7D"


def test_a_trump_wins_a_led_honour_in_the_trumps_variant() -> None:
    assert choose(["7C", "8H"], lead="AS", trump_suit="H") == "8H"
