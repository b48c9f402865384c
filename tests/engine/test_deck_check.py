"""The deck check every Deal starts with (tables.deck_bits): only the 32 cards, each once, as plain ints."""

from __future__ import annotations

import random
import re

import pytest

from arena.engine import Deal, DeckError, Rules, check_deck
from arena.engine.tables import deck_bits


def test_a_shuffled_deck_passes_with_its_bits() -> None:
    deck = list(range(32))
    random.Random(5).shuffle(deck)
    checked, bits = deck_bits(deck)
    assert checked == tuple(deck) and bits == tuple(1 << c for c in deck)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (-33, "holds -33, which is not a card"),  # would wrap around as a tuple index
        (-1, "holds -1, which is not a card"),
        (32, "holds 32, which is not a card"),
        (3.0, "holds 3.0, which is not a card"),  # equal to a card, but not an int
        ("3", "holds '3', which is not a card"),
        ([3], "holds [3], which is not a card"),  # unhashable
        (None, "holds None, which is not a card"),
    ],
)
def test_anything_but_a_card_is_named(bad: object, message: str) -> None:
    for pos in (0, 17, 31):
        deck: list = list(range(32))
        deck[pos] = bad
        with pytest.raises(DeckError, match=re.escape(message)):
            check_deck(deck)
        with pytest.raises(DeckError):
            Deal(Rules(), 0, deck)


def test_doubled_missing_and_wrong_length() -> None:
    with pytest.raises(DeckError, match="twice ♣7"):
        check_deck([0, *range(1, 31), 0])
    with pytest.raises(DeckError, match="it has 31 cards"):
        check_deck(range(31))
    with pytest.raises(DeckError, match="it has 33 cards"):
        check_deck([*range(32), 0])
    with pytest.raises(DeckError, match="it has 0 cards"):
        check_deck([])
    with pytest.raises(DeckError, match="it has 1 cards"):
        check_deck([5])
