"""arena/proto/pieces.py on its own: a record cut into pieces and put back together, and every way
the pieces can fail to make one record (the gRPC tests are tests/service/test_reply_pieces.py and
tests/referee/test_management.py)."""

from __future__ import annotations

import hashlib
import random

import pytest

from arena.proto import arena_pb2 as pb
from arena.proto.pieces import PIECE, BadOffset, PieceError, piece_of, reassemble

WHOLE = random.Random(5).randbytes(2 * PIECE + 123)


def server(whole: bytes, size: int = PIECE):
    """fetch(offset) as a server answers it, counting the calls."""
    asked: list[int] = []

    def fetch(offset: int) -> pb.Replay:
        asked.append(offset)
        p = piece_of(whole, offset, size)
        return pb.Replay(record=p.data, total_size=p.total_size, next_offset=p.next_offset, sha256=p.sha256)

    return fetch, asked


def test_a_long_record_comes_in_pieces_and_back_whole() -> None:
    fetch, asked = server(WHOLE)
    assert reassemble(fetch) == WHOLE
    assert asked == [0, PIECE, 2 * PIECE]
    assert all(len(fetch(o).record) <= PIECE for o in [0, PIECE, 2 * PIECE])


def test_a_short_record_comes_whole_in_one_reply() -> None:
    short = WHOLE[:1000]
    first = piece_of(short, 0)
    assert (first.data, first.total_size, first.next_offset) == (short, 1000, 0)
    assert first.sha256 == hashlib.sha256(short).digest()
    fetch, asked = server(short)
    assert reassemble(fetch) == short and asked == [0]
    assert piece_of(b"", 0).data == b"" and reassemble(server(b"")[0]) == b""


def test_an_older_server_without_sizes_is_read_as_one_reply() -> None:
    assert reassemble(lambda offset: pb.Replay(record=b"whole")) == b"whole"


@pytest.mark.parametrize("offset", [-1, len(WHOLE), len(WHOLE) + 1, 10**12])
def test_an_offset_past_the_end_is_refused(offset: int) -> None:
    with pytest.raises(BadOffset, match=f"offset {offset}: the record is {len(WHOLE)} bytes"):
        piece_of(WHOLE, offset)


def test_pieces_of_a_record_rewritten_between_calls_are_refused() -> None:
    old, _ = server(WHOLE)
    new, _ = server(WHOLE[:-1] + b"x")
    with pytest.raises(PieceError, match="changed while it was read"):
        reassemble(lambda offset: old(offset) if offset == 0 else new(offset))


def test_pieces_that_do_not_follow_on_or_do_not_hash_are_refused() -> None:
    fetch, _ = server(WHOLE)

    def skips(offset: int) -> pb.Replay:
        reply = fetch(offset)
        if reply.next_offset:
            reply.next_offset += 1
        return reply

    with pytest.raises(PieceError, match="read on from byte"):
        reassemble(skips)

    def corrupt(offset: int) -> pb.Replay:
        reply = fetch(offset)
        reply.record = bytes(len(reply.record)) if offset else reply.record
        return reply

    with pytest.raises(PieceError, match="do not match the record's size"):
        reassemble(corrupt)

    def stalls(offset: int) -> pb.Replay:
        reply = fetch(offset)
        return (
            reply
            if offset == 0
            else pb.Replay(total_size=reply.total_size, sha256=reply.sha256, next_offset=1)
        )

    with pytest.raises(PieceError, match="empty piece"):
        reassemble(stalls)


def test_a_record_over_the_cap_is_not_gathered() -> None:
    fetch, asked = server(WHOLE)
    with pytest.raises(PieceError, match="over the 1 MiB"):
        reassemble(fetch, limit=PIECE)
    assert asked == [0]
