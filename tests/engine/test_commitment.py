"""The deck commitment's test vectors (docs/shuffle.md, "The deck commitment"), byte for byte."""

from __future__ import annotations

import hashlib

import pytest

from arena.engine import CommitmentError, check_commitment, deck_commitment

SALT = bytes.fromhex("00112233445566778899aabbccddeeff")
# DOMAIN | seed 42 (8 bytes, big-endian) | len("m17") (2 bytes) | "m17" | salt: as docs/shuffle.md spells it
BODY = bytes.fromhex(
    "656c6665726e2d6465636b2d636f6d6d69746d656e742f310a" "000000000000002a" "0003" "6d3137"
    "00112233445566778899aabbccddeeff"
)  # fmt: skip
VECTOR = "8bb23e418d532daa113e23afdefc0b36329799fd1e4e59e2909ebdcc335bece7"


def test_the_documented_vector():
    assert BODY.startswith(b"elfern-deck-commitment/1\n")
    assert hashlib.sha256(BODY).hexdigest() == VECTOR
    assert deck_commitment(42, "m17", SALT) == VECTOR
    assert deck_commitment(0, "m1", bytes(range(16))) == (
        "b19304c6b066e91a5d350821b3e52652e4ce087e361d27c8aa12753c62b899b8"
    )


@pytest.mark.parametrize(
    ("seed", "match_id", "salt"),
    [(43, "m17", SALT), (42, "m18", SALT), (42, "m17", SALT[:-1] + b"\x00"), (42 << 8, "m17", SALT)],
)
def test_any_change_breaks_the_commitment(seed, match_id, salt):
    assert deck_commitment(seed, match_id, salt) != VECTOR
    assert not check_commitment(VECTOR, seed, match_id, salt)


def test_check_accepts_the_vector_in_either_case():
    assert check_commitment(VECTOR, 42, "m17", SALT) and check_commitment(VECTOR.upper(), 42, "m17", SALT)


@pytest.mark.parametrize(
    ("seed", "salt", "words"), [(1, b"x" * 15, "16 bytes"), (-1, SALT, "64 bits"), (1 << 64, SALT, "64 bits")]
)
def test_what_cannot_be_committed_is_refused(seed, salt, words):
    with pytest.raises(CommitmentError, match=words):
        deck_commitment(seed, "m1", salt)
