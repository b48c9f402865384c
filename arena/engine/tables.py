"""Precomputed tables of the deal (who gets which deck position, who wins a trick), deck checks and
the random card pick of playouts."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter

from arena.engine.cards import FULL_DECK, HONOUR, cards_of, labels
from arena.engine.types import DeckError, RandomBits

_new_trick = tuple.__new__  # builds a TrickRecord without the Python-level NamedTuple.__new__


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
    """FOLLOWER_WINS[lead * 32 + follow]: a higher card of the suit led, or a trump on a non-trump."""
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
# TRICK_RESULT[trump][lead << 5 | follow] = (follower wins, honour points in the trick): one lookup per trick.
TRICK_RESULT = {
    t: tuple((wins[i], HONOUR[i >> 5] + HONOUR[i & 31]) for i in range(1024)) for t, wins in FOLLOWER_WINS.items()
}


ALL_CARDS = frozenset(range(32))


def check_deck(deck: Sequence[int]) -> tuple[int, ...]:
    """The deck as a tuple of 32 distinct cards, or DeckError saying what is missing or doubled."""
    deck = tuple(deck)
    # fast path: 32 distinct values equal to 0..31, and an int sum (a float anywhere makes it a float)
    if len(deck) == 32 and set(deck) == ALL_CARDS and type(sum(deck)) is int:
        return deck
    mask = 0
    for c in deck:
        if type(c) is not int or not 0 <= c < 32:
            raise DeckError(f"the deck holds {c!r}, which is not a card")
        mask |= 1 << c
    seen: set[int] = set()
    doubled = [c for c in deck if c in seen or seen.add(c)]
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
