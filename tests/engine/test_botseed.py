"""The bot seed of docs/shuffle.md §6: its vectors, and the reason it is a hash (a SplitMix64
stream would hand a bot the match seed)."""

from __future__ import annotations

import hashlib

import pytest

from arena.engine import bot_seed, deal_deck
from arena.engine.rng import GOLDEN, MASK64, MIX1, MIX2, PURPOSE_SHUFFLE, mix64, stream

VECTORS = [
    (0, 0, 0x2CDB76B234857DA6),
    (0, 1, 0x8247F3C0BB533637),
    (7, 0, 0x5BFE4328ED760C23),
    (7, 1, 0x445B6FEF3F029FA6),
    (42, 0, 0xE19198D80C43384B),
    (42, 1, 0x2A8CC13E081362D6),
    (2**64 - 1, 0, 0xD58FD532799A3CA7),
]


@pytest.mark.parametrize(("seed", "seat", "expected"), VECTORS)
def test_vectors_from_docs(seed: int, seat: int, expected: int) -> None:
    assert bot_seed(seed, seat) == expected


def test_the_hashed_bytes_are_as_documented() -> None:
    body = bytes.fromhex("656c6665726e2d626f742d736565642f310a000000000000002a01")
    assert body.startswith(b"elfern-bot-seed/1\n")
    assert int.from_bytes(hashlib.sha256(body).digest()[:8], "big") == bot_seed(42, 1)


def test_seats_get_different_seeds_and_nothing_else_matters() -> None:
    seeds = [(bot_seed(s, 0), bot_seed(s, 1)) for s in range(200)]
    assert all(a != b for a, b in seeds)
    assert len({x for pair in seeds for x in pair}) == 400
    assert bot_seed(12345, 1) == bot_seed(12345, 1)


@pytest.mark.parametrize(("seed", "seat"), [(-1, 0), (2**64, 0), (1, 2), (1, -1)])
def test_out_of_range_is_refused(seed: int, seat: int) -> None:
    with pytest.raises(ValueError, match="seed|seat"):
        bot_seed(seed, seat)


def _unmix64(z: int) -> int:
    """The inverse of mix64: undo each xor-shift and multiply by the odd constants' inverses."""

    def unshift(x: int, k: int) -> int:
        y = x
        for _ in range(64 // k + 1):
            y = x ^ (y >> k)
        return y & MASK64

    z = unshift(z, 31)
    z = (z * pow(MIX2, -1, 1 << 64)) & MASK64
    z = unshift(z, 27)
    z = (z * pow(MIX1, -1, 1 << 64)) & MASK64
    return unshift(z, 30)


def test_a_splitmix_stream_would_give_the_seed_away() -> None:
    # Why §6 hashes: one output of a "bot stream" stream(seed, 3, seat) inverts to the match seed,
    # and so to every deck. The bot seed, a hash, does not (the same inversion finds nothing).
    seed, seat = 0x1234_5678_9ABC_DEF0, 1
    key = mix64((3 << 32) | seat)
    leaked = stream(seed, 3, seat).next64()
    recovered = ((_unmix64(leaked) - GOLDEN) & MASK64) ^ key
    assert recovered == seed
    assert deal_deck(recovered, 0) == deal_deck(seed, 0)
    guess = ((_unmix64(bot_seed(seed, seat)) - GOLDEN) & MASK64) ^ key
    assert guess != seed
    assert stream(guess, PURPOSE_SHUFFLE, 0).next64() != stream(seed, PURPOSE_SHUFFLE, 0).next64()
