"""The project's own randomness: SplitMix64, an unbiased Fisher-Yates shuffle and the dealer draw.

Specified byte for byte in docs/shuffle.md so that any language can reproduce a match from its seed.
Every random decision of a match comes from its own stream, keyed by (seed, purpose, deal index), so
the deck of deal k does not depend on what happened in earlier deals: a duplicate match (same seed,
seats swapped) sees the same deck in deal k.
"""

from __future__ import annotations

from typing import Any

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
TWO32 = 1 << 32

PURPOSE_DEALER_DRAW = 1
PURPOSE_SHUFFLE = 2


def mix64(z: int) -> int:
    """The SplitMix64 output function (a bijection on 64-bit ints)."""
    z = ((z ^ (z >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    return z ^ (z >> 31)


class SplitMix64:
    """SplitMix64 (Steele, Lea, Flood 2014). 32-bit words come high half first, then low half."""

    __slots__ = ("state", "_low")

    def __init__(self, seed: int) -> None:
        self.state = seed & MASK64
        self._low: int | None = None

    def next64(self) -> int:
        self.state = (self.state + GOLDEN) & MASK64
        return mix64(self.state)

    def next32(self) -> int:
        """The high 32 bits of a fresh 64-bit output; the next call returns its low 32 bits."""
        if self._low is not None:
            low, self._low = self._low, None
            return low
        word = self.next64()
        self._low = word & 0xFFFFFFFF
        return word >> 32

    def below(self, n: int) -> int:
        """A uniform int in [0, n), 1 <= n <= 2**32, by rejection: no modulo bias."""
        limit = TWO32 - TWO32 % n
        while True:
            word = self.next32()
            if word < limit:
                return word % n

    def shuffle(self, items: list[Any]) -> None:
        """Fisher-Yates in place: for i = len-1 down to 1, swap items[i] with items[below(i + 1)]."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def stream(seed: int, purpose: int, index: int) -> SplitMix64:
    """The generator for one purpose of one deal: SplitMix64(seed XOR mix64(purpose << 32 | index))."""
    return SplitMix64((seed & MASK64) ^ mix64((purpose << 32) | index))


# LIMITS[n] = 2**32 - 2**32 % n: below(n) rejects a word at or above it (n = 2..32; precomputed for deal_deck).
LIMITS = (0, TWO32, *(TWO32 - TWO32 % n for n in range(2, 33)))


def deal_deck(seed: int, deal_index: int) -> list[int]:
    """The pack for deal `deal_index` (0-based), top card first: cards 0..31 ascending, then shuffled."""
    # Exactly `stream(seed, PURPOSE_SHUFFLE, deal_index).shuffle(list(range(32)))` (_reference_deck), inlined
    # for speed: each 64-bit output serves two steps, i (its high word) and i - 1 (its low word). A word that
    # below() would reject (at or above LIMITS[n]; under 1 in 10 million per deck) shifts every later word
    # by one, so that deck is redone by the reference. tests/engine/test_rng.py compares both.
    deck = list(range(32))
    state = (seed & MASK64) ^ mix64((PURPOSE_SHUFFLE << 32) | deal_index)
    for i in range(31, 2, -2):  # steps 31 and 30, 29 and 28, ..., 3 and 2
        state = (state + GOLDEN) & MASK64
        z = ((state ^ (state >> 30)) * MIX1) & MASK64
        z = ((z ^ (z >> 27)) * MIX2) & MASK64
        z ^= z >> 31
        high, low = z >> 32, z & 0xFFFFFFFF
        if high >= LIMITS[i + 1] or low >= LIMITS[i]:
            return _reference_deck(seed, deal_index)
        j = high % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
        j = low % i
        deck[i - 1], deck[j] = deck[j], deck[i - 1]
    # step 1 (n = 2, which never rejects): the high word of the 16th output
    state = (state + GOLDEN) & MASK64
    z = ((state ^ (state >> 30)) * MIX1) & MASK64
    z = ((z ^ (z >> 27)) * MIX2) & MASK64
    j = ((z ^ (z >> 31)) >> 32) % 2
    deck[1], deck[j] = deck[j], deck[1]
    return deck


def _reference_deck(seed: int, deal_index: int) -> list[int]:
    """deal_deck by the letter of docs/shuffle.md, word by word with rejection."""
    deck = list(range(32))
    stream(seed, PURPOSE_SHUFFLE, deal_index).shuffle(deck)
    return deck


def dealer_draw(seed: int, deal_index: int) -> tuple[int, list[tuple[int, int]]]:
    """The draw that picks the dealer of deal `deal_index`: returns (dealer, [(seat0 card, seat1 card), ...]).

    Each round seat 0 draws `a = below(32)` from the full pack, seat 1 `b = below(31)` from the 31 left
    (b counts past a); the lower rank deals, equal ranks draw again.
    """
    rng = stream(seed, PURPOSE_DEALER_DRAW, deal_index)
    draws: list[tuple[int, int]] = []
    while True:
        a = rng.below(32)
        b = rng.below(31)
        if b >= a:
            b += 1
        draws.append((a, b))
        if a & 7 != b & 7:
            return (0 if a & 7 < b & 7 else 1), draws
