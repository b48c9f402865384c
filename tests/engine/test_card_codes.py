"""Card codes, labels and masks (docs/rules.md §1, docs/engine.md)."""

from __future__ import annotations

import pytest

from arena.engine import CardError, card_code, card_label, cards_of, honours_in, mask_of, parse_card
from arena.engine.cards import ABOVE, HONOUR_MASK


def test_layout_suit_times_eight_plus_rank() -> None:
    assert parse_card("7C") == 0
    assert parse_card("AC") == 7
    assert parse_card("7D") == 8
    assert parse_card("TS") == 31 - 4
    assert parse_card("AS") == 31


def test_codes_round_trip_for_all_32_cards() -> None:
    assert [parse_card(card_code(c)) for c in range(32)] == list(range(32))
    assert len({card_code(c) for c in range(32)}) == 32


def test_parse_is_lenient_on_input() -> None:
    assert parse_card("ts") == parse_card("TS") == parse_card("10S") == parse_card(" 10s ")


@pytest.mark.parametrize("bad", ["", "1S", "AX", "ASS", "T", None, 5])
def test_bad_codes_raise_a_clear_error(bad: object) -> None:
    with pytest.raises(CardError, match="is not a card"):
        parse_card(bad)  # type: ignore[arg-type]


def test_french_labels() -> None:
    assert card_label(parse_card("TS")) == "♠10"
    assert card_label(parse_card("AH")) == "♥A"
    assert card_label(parse_card("7C")) == "♣7"
    assert card_label(parse_card("QD")) == "♦Q"


def test_german_labels() -> None:
    assert card_label(parse_card("JS"), "german") == "Grün Unter"
    assert card_label(parse_card("AC"), "german") == "Eichel Daus"
    assert card_label(parse_card("QH"), "german") == "Herz Ober"
    assert card_label(parse_card("KD"), "german") == "Schellen König"
    assert card_label(parse_card("TD"), "german") == "Schellen 10"


def test_masks_and_honours() -> None:
    cards = [parse_card(c) for c in ("AS", "7C", "TH", "9D")]
    mask = mask_of(cards)
    assert cards_of(mask) == sorted(cards)
    assert honours_in(mask) == 2  # AS and TH
    assert honours_in(HONOUR_MASK) == 20 and HONOUR_MASK.bit_count() == 20
    assert cards_of(ABOVE[parse_card("QH")]) == [parse_card("KH"), parse_card("AH")]
    assert ABOVE[parse_card("AH")] == 0


def test_one_helper_each_way_between_wire_codes_and_labels() -> None:
    """docs/rules.md "Card notation": wire codes for machines, labels for people."""
    from arena.engine import code_label, label_code

    for c in range(32):
        code = card_code(c)
        for deck in ("french", "german"):
            assert label_code(code_label(code, deck)) == code
            assert label_code(code_label(code, deck).lower()) == code
    assert (
        code_label("TS") == "♠10" and code_label("7C") == "♣7" and code_label("JS", "german") == "Grün Unter"
    )
    assert label_code("♥A") == "AH" and label_code("10h") == "TH"
    with pytest.raises(CardError):
        label_code("♥1")
    with pytest.raises(CardError):  # machine-readable forms stay wire codes only
        parse_card("♠10")


def test_labels_in_rewrites_the_arenas_card_sentence() -> None:
    from arena.engine.cards import labels_in

    detail = "played 7C, which is not in your hand; the legal cards were JC TH AS (deal 1, trick 1, turn 2)"
    assert labels_in(detail) == (
        "played ♣7, which is not in your hand; the legal cards were ♣J ♥10 ♠A (deal 1, trick 1, turn 2)"
    )
    assert (
        labels_in("follow H (hearts), trump (S); ASS, bob@7C, 7CD")
        == "follow H (hearts), trump (S); ASS, bob@7C, 7CD"
    )
