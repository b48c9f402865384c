"""A record too long for one gRPC reply, sent in pieces: `GetReplay` and `GetMatch` (arena.proto).

The server cuts the whole record into pieces of at most `PIECE` bytes: each reply carries the piece
at the request's `offset`, the whole record's `total_size` and SHA-256, and the `next_offset` to ask
for (0 on the last piece). A record of at most `PIECE` bytes comes whole in one reply, as before
pieces existed, so a client that never sends an offset still reads every short record. The client
(`reassemble`) asks piece after piece and checks the whole against the size and the hash, so pieces
of two different records (one rewritten between two calls) never pass as one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The most record bytes in one reply: a quarter of gRPC's default 4 MiB limit, so a reply (the piece
#: plus under 100 bytes of ids, sizes and the hash) fits every client's default receive limit.
PIECE = 1024 * 1024
#: The longest whole record a client puts together: the most a record may decompress to
#: (codec.MAX_RECORD_BYTES); its compressed form is never longer.
MAX_WHOLE = 32 * 1024 * 1024


class BadOffset(ValueError):
    """An offset past the record's end (the server answers INVALID_ARGUMENT with it)."""


class PieceError(ValueError):
    """Pieces that do not make one record: their sizes or hashes disagree, or they do not follow on."""


@dataclass(frozen=True)
class Piece:
    data: bytes
    total_size: int
    next_offset: int  # 0: this is the last piece
    sha256: bytes  # of the whole record


def piece_of(whole: bytes, offset: int, size: int = PIECE) -> Piece:
    """The piece of `whole` that starts at `offset` (at most `size` bytes)."""
    if offset < 0 or offset > len(whole) or (offset == len(whole) and offset):
        raise BadOffset(
            f"offset {offset}: the record is {len(whole)} bytes; ask from 0, then each reply's next_offset"
        )
    end = min(offset + size, len(whole))
    return Piece(
        whole[offset:end], len(whole), end if end < len(whole) else 0, hashlib.sha256(whole).digest()
    )


def reassemble(fetch: Callable[[int], Any], field: str = "record", limit: int = MAX_WHOLE) -> bytes:
    """The whole record, from `fetch(offset)`: a reply with `field`, `total_size`, `next_offset` and
    `sha256` (Replay, MatchStatus). A reply without a size (an older server) is taken as the whole."""
    first = fetch(0)
    data = getattr(first, field)
    if not first.total_size and not first.next_offset:
        if data:  # an older server sends no size: its one reply is the whole record
            return bytes(data)
        return b""
    total, digest = first.total_size, bytes(first.sha256)
    if total > limit:
        raise PieceError(
            f"the record is {total} bytes, over the {limit // (1024 * 1024)} MiB a record may take"
        )
    parts, got, following = [bytes(data)], len(data), first.next_offset
    while following:
        if following != got or got >= total:
            raise PieceError(
                f"the server asked to read on from byte {following}, but {got} of {total} were read"
            )
        reply = fetch(following)
        if reply.total_size != total or bytes(reply.sha256) != digest:
            raise PieceError("the record changed while it was read in pieces; ask again")
        piece = bytes(getattr(reply, field))
        if not piece:
            raise PieceError(f"the server sent an empty piece at byte {following} of {total}")
        parts.append(piece)
        got += len(piece)
        following = reply.next_offset
    whole = b"".join(parts)
    if len(whole) != total or hashlib.sha256(whole).digest() != digest:
        raise PieceError(
            f"the pieces make {len(whole)} bytes that do not match the record's size ({total}) and hash"
        )
    return whole
