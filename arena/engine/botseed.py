"""The bot seed: a 64-bit value per seat, sent in `Welcome.bot_seed`, from which a bot seeds its own
random choices so that `arena play A B --seed N` repeats every move (docs/shuffle.md §6).

It is a one-way hash of the match seed, not a SplitMix64 stream: SplitMix64 is invertible (its
output function is a bijection and the stream key is XORed into the state), so a single output of
`stream(seed, 3, seat)` would hand the bot the match seed, hence every deck. SHA-256 under its own
domain tag gives the bot nothing it can turn back into the seed short of trying every seed.
"""

from __future__ import annotations

import hashlib

DOMAIN = b"elfern-bot-seed/1\n"
MASK64 = (1 << 64) - 1


def bot_seed(seed: int, seat: int) -> int:
    """The first 8 bytes, big-endian, of SHA-256(DOMAIN | seed (8 bytes, big-endian) | seat (1 byte))."""
    if not 0 <= seed <= MASK64:
        raise ValueError(f"the seed must fit 64 bits, got {seed}")
    if seat not in (0, 1):
        raise ValueError(f"the seat must be 0 or 1, got {seat}")
    digest = hashlib.sha256(DOMAIN + seed.to_bytes(8, "big") + bytes((seat,))).digest()
    return int.from_bytes(digest[:8], "big")
