"""Precomputed tables of the deal (who gets which deck position, who wins a trick), deck checks and
the random card pick of playouts."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from arena.engine.cards import FULL_DECK, HONOUR, cards_of, labels
from arena.engine.types import DeckError, RandomBits

_new_tuple = tuple.__new__  # builds a NamedTuple (TrickRecord, DealOutcome) without its Python-level __new__
_new_trick = _new_tuple


def _deal_positions(hand_size: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Deck positions of the non-dealer's and the dealer's cards: packets of 2, a last packet of 1 if odd."""
    packets = [2] * (hand_size // 2) + [1] * (hand_size % 2)
    nondealer: list[int] = []
    dealer: list[int] = []
    pos = 0
    for size in packets:
        nondealer.extend(range(pos, pos + size))
        pos += size
        dealer.extend(range(pos, pos + size))
        pos += size
    return tuple(nondealer), tuple(dealer)


DEAL_POSITIONS = {h: _deal_positions(h) for h in (6, 5, 4)}
# DEAL_GETTERS[h](deck) -> (the non-dealer's cards, the dealer's cards), each a tuple.
DEAL_GETTERS = {h: (itemgetter(*non), itemgetter(*dealer)) for h, (non, dealer) in DEAL_POSITIONS.items()}
BIT = tuple(1 << c for c in range(32))


def _beats_table(trump: int | None) -> tuple[bool, ...]:
    """FOLLOWER_WINS[trump][lead << 5 | follow]: a higher card of the suit led, or a trump on a non-trump."""
    table = []
    for lead in range(32):
        for follow in range(32):
            if follow >> 3 == lead >> 3:
                wins = follow > lead
            else:
                wins = trump is not None and follow >> 3 == trump
            table.append(wins)
    return tuple(table)


FOLLOWER_WINS = {t: _beats_table(t) for t in (None, 0, 1, 2, 3)}
# PAIR_HONOURS[lead << 5 | follow]: the honour points in a trick.
PAIR_HONOURS = tuple(HONOUR[i >> 5] + HONOUR[i & 31] for i in range(1024))
# TRICK_RESULT[trump][lead << 5 | follow] = (follower wins, honour points in the trick): one lookup per trick.
TRICK_RESULT = {
    t: tuple((wins[i], HONOUR[i >> 5] + HONOUR[i & 31]) for i in range(1024))
    for t, wins in FOLLOWER_WINS.items()
}


ALL_CARDS = frozenset(range(32))
# CARD_BIT[c] = 1 << c, keyed by the 32 cards (a dict: a negative index cannot wrap around as in a tuple).
CARD_BIT = {c: 1 << c for c in range(32)}


def deck_bits(deck: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The deck as a tuple of 32 distinct cards and each card's bit, in deck order; DeckError otherwise.

    Every deal starts here, so the check is three C-level passes: the bits by one itemgetter call (a
    KeyError for anything that is not a card or equal to one), their sum (32 distinct powers of two below
    2**32 are the only ones that add up to 2**32 - 1), and the type of the cards' sum (an int unless a
    card is a float or an int-like such as 3.0 that only equals a card).
    """
    deck = tuple(deck)
    if len(deck) == 32:
        try:
            bits = itemgetter(*deck)(CARD_BIT)
            if sum(bits) == FULL_DECK and type(sum(deck)) is int:
                return deck, bits
        except (KeyError, TypeError):  # not a card (TypeError: unhashable, or no int sum)
            pass
    _deck_error(deck)
    raise AssertionError("unreachable")  # pragma: no cover


def check_deck(deck: Sequence[int]) -> tuple[int, ...]:
    """The deck as a tuple of 32 distinct cards, or DeckError saying what is missing or doubled."""
    return deck_bits(deck)[0]


def _deck_error(deck: tuple[int, ...]) -> None:
    """Raise the DeckError that says what is wrong with a deck that failed the check."""
    mask = 0
    for c in deck:
        if type(c) is not int or not 0 <= c < 32:
            raise DeckError(f"the deck holds {c!r}, which is not a card")
        mask |= 1 << c
    seen: set[int] = set()
    doubled = []
    for c in deck:
        if c in seen:
            doubled.append(c)
        seen.add(c)
    missing = cards_of(FULL_DECK & ~mask)
    parts = [f"it has {len(deck)} cards"]
    if missing:
        parts.append(f"missing {labels(missing)}")
    if doubled:
        parts.append(f"twice {labels(doubled)}")
    raise DeckError("the deck is not exactly the 32 cards: " + ", ".join(parts))


def pick_card(mask: int, rng: RandomBits) -> int:
    """A random card of a non-empty mask: the k-th set bit, k = getrandbits(32) * popcount >> 32.

    (Uniform up to a bias below popcount / 2**32, far below anything a playout can measure.)
    """
    k = rng.getrandbits(32) * mask.bit_count() >> 32
    while k:
        mask &= mask - 1
        k -= 1
    return (mask & -mask).bit_length() - 1
