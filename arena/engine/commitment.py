"""The deck commitment: a hash, public when a match is scheduled, that binds the match to its seed.

After the match the seed and the salt are revealed and anyone can recompute the hash, which proves
the shuffle was fixed before play (specified byte for byte in docs/shuffle.md). The salt, 16 random
bytes, keeps the seed from being found by trying candidates against the published hash.
"""

from __future__ import annotations

import hashlib
import hmac

DOMAIN = b"elfern-deck-commitment/1\n"
SALT_BYTES = 16
MAX_MATCH_ID = 0xFFFF


class CommitmentError(ValueError):
    """A salt or match id that cannot be committed to."""


def deck_commitment(seed: int, match_id: str, salt: bytes) -> str:
    """Lower-case hex SHA-256 of DOMAIN | seed (8 bytes, big-endian) | len(id) (2 bytes) | id (UTF-8) | salt."""
    if len(salt) != SALT_BYTES:
        raise CommitmentError(f"the salt must be {SALT_BYTES} bytes, got {len(salt)}")
    if not 0 <= seed < 1 << 64:
        raise CommitmentError(f"the seed must fit 64 bits, got {seed}")
    ident = match_id.encode()
    if len(ident) > MAX_MATCH_ID:
        raise CommitmentError(f"the match id is {len(ident)} bytes; at most {MAX_MATCH_ID}")
    body = DOMAIN + seed.to_bytes(8, "big") + len(ident).to_bytes(2, "big") + ident + salt
    return hashlib.sha256(body).hexdigest()


def check_commitment(commitment: str, seed: int, match_id: str, salt: bytes) -> bool:
    """True when `commitment` is the hash of this seed, id and salt."""
    return hmac.compare_digest(commitment.lower().encode(), deck_commitment(seed, match_id, salt).encode())
