"""The tactician's phase-1 tactics, one classical rule per test, on hand-made positions."""

from __future__ import annotations

import tactics
from elfcards import Position, beats, code, deal_value, parse


def position(hand: str, lead: str | None = None, seen: str = "", stock: int = 14) -> Position:
    cards = frozenset(parse(c) for c in hand.split())
    played = {parse(c) for c in seen.split()} | ({parse(lead)} if lead else set())
    return Position(
        hand=cards, legal=tuple(sorted(cards)), lead=parse(lead) if lead else None,
        seen=frozenset(played), stock=stock,
    )  # fmt: skip


def play(hand: str, lead: str | None = None, seen: str = "", stock: int = 14) -> str:
    return code(tactics.choose(position(hand, lead, seen, stock)))


def test_takes_a_led_honour_with_the_cheapest_winner() -> None:
    assert play("QS AS 7H 8C 9D KD", lead="JS") == "QS"


def test_does_not_win_a_trick_of_blanks() -> None:
    card = play("8H 9C 7D QS KS 9S", lead="7H")
    assert not beats(parse(card), parse("7H"), None)
    assert parse(card) & 7 < 3, "and it throws a blank, not an honour"


def test_cashes_a_vulnerable_ten_on_a_blank_lead() -> None:
    # A singleton ten with A K Q J still out is likely lost later: win the blank trick with it.
    assert play("TD 7C 8S 9S KS QS", lead="8D") == "TD"


def test_keeps_the_ten_when_it_is_already_unbeatable() -> None:
    # A K Q J of diamonds are all played: the ten is safe to keep, so a blank goes instead.
    card = play("TD 7C 8S 9S KS QS", lead="8D", seen="AD KD QD JD")
    assert card != "TD"


def test_keeps_an_ace_for_phase_2_instead_of_leading_it() -> None:
    assert play("AS 7C 8C KH 9D QD") != "AS"


def test_a_card_becomes_unbeatable_once_the_higher_ones_are_played() -> None:
    pos = position("KS 7C 8C 9D 7H 8H", seen="AS 9S")
    assert tactics.keep(pos, parse("KS")) > 1.0, "the king is now the top spade"
    before = position("KS 7C 8C 9D 7H 8H")
    assert tactics.keep(before, parse("KS")) < tactics.keep(pos, parse("KS"))


def test_long_suits_are_worth_keeping() -> None:
    pos = position("7C 8C 9C 7D KS QH")
    assert tactics.keep(pos, parse("7C")) > tactics.keep(pos, parse("7D"))


def test_discards_a_blank_from_a_short_suit_when_it_cannot_win() -> None:
    # The ace of hearts led cannot be beaten: throw the lone blank diamond, keep the long clubs.
    assert play("7C 8C 9C 7D KS QS", lead="AH") == "7D"


def test_always_plays_a_legal_card() -> None:
    pos = position("7C 8C 9C 7D KS QS", lead="AH")
    narrowed = Position(**{**pos.__dict__, "legal": (parse("KS"), parse("QS"))})
    assert code(tactics.choose(narrowed)) in {"KS", "QS"}


def test_deal_value_follows_tendler_scoring() -> None:
    assert [deal_value(p) for p in (20, 19, 15, 14, 11, 10, 9, 5, 4, 0)] == [3, 2, 2, 1, 1, 0, -1, -2, -2, -3]
