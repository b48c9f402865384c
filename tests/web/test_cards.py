"""The SVG card faces: every card of both decks, valid SVG, named as the engine names it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from arena.engine.cards import card_label
from arena.web.cards import all_codes, card_svg, sprite, standalone

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("deck", ["french", "german"])
def test_sprite_has_every_face_and_a_back(deck):
    root = ET.fromstring(sprite(deck))
    ids = {el.get("id") for el in root.iter(f"{SVG}symbol")}
    assert ids == {f"card-{c}" for c in all_codes()} | {f"suit-{s}" for s in "CDHS"} | {"card-back"}
    assert len(all_codes()) == 32


def test_the_decks_differ_in_their_suit_glyphs():
    french = ET.fromstring(sprite("french"))
    german = ET.fromstring(sprite("german"))

    def glyph(root, suit):
        return ET.tostring(next(el for el in root.iter(f"{SVG}symbol") if el.get("id") == f"suit-{suit}"))

    for suit in "CDS":  # acorn, bell, leaf are drawn differently from club, diamond, spade
        assert glyph(french, suit) != glyph(german, suit)
    # German court cards are indexed U and O (Unter, Ober), French ones J and Q
    assert ">U</text>" in sprite("german") and ">J</text>" not in sprite("german")
    assert ">J</text>" in sprite("french")


@pytest.mark.parametrize("deck", ["french", "german"])
def test_card_markup_carries_the_code_and_the_engine_label(deck):
    for code in all_codes():
        el = ET.fromstring(card_svg(code, deck))
        assert el.get("data-card") == code
        assert el.get("aria-label") == card_label(all_codes().index(code), deck)
    assert "card-back" in card_svg(None)


def test_standalone_card_is_a_complete_svg():
    root = ET.fromstring(standalone("QH", "german"))
    assert root.tag == f"{SVG}svg"
    assert {el.get("id") for el in root.iter(f"{SVG}symbol")} == {"card-QH", "suit-H"}


def test_unknown_deck_is_refused():
    with pytest.raises(ValueError, match="french, german"):
        sprite("tarot")
