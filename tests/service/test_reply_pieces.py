"""No reply exceeds gRPC's limit, however long the record (issue #31 §5): a real match, played and
recorded as the workers do, whose stored record then holds a chatty bot's logs (over 4 MiB per seat,
compressed), is read over real gRPC in pieces of at most 1 MiB, whole and verified: by an owner, by
the admin, and by `arena replay show --private --logs` in a separate CLI process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from live_play import add_bots, queue_challenge, start_match
from service_support import ADMIN, Running

from arena.access.owners import add_owner
from arena.proto import arena_pb2 as pb
from arena.proto.codec import decode_record
from arena.proto.pieces import PIECE, reassemble
from arena.replay.privacy import private_record_bytes, public_record_bytes
from arena.store.models import BotVersion, Match, Replay

REPO = Path(__file__).resolve().parents[2]
OVERHEAD = 100  # match id, private flag, sizes and the 32-byte hash: the most a reply adds to its piece


def chatty_match(arena_service: Running, tmp_path: Path, chatty) -> tuple[int, int]:
    """(match id, the seat of ann's bot): a challenge played for real, its record made chatty."""
    store = arena_service.service.store
    add_bots(store, tmp_path, ms=0)
    mid = queue_challenge(store)
    start_match(store, mid, live=False).join()
    with store.tx() as s:
        match = s.get_one(Match, mid)
        owners = [s.get_one(BotVersion, v).bot.owner for v in (match.version0_id, match.version1_id)]
        seat = owners.index("ann")
        row = s.get_one(Replay, mid)
        row.data = chatty(row.data, (0, 1), 6)
    return mid, seat


def read_in_pieces(stub, request: pb.GetReplayRequest, token: str | None) -> tuple[bytes, list[int]]:
    """The whole record as `reassemble` reads it, and every reply's size on the wire."""
    sizes: list[int] = []

    def fetch(offset: int) -> pb.Replay:
        asked = pb.GetReplayRequest()
        asked.CopyFrom(request)
        asked.offset = offset
        reply = stub.GetReplay(asked, metadata=Running.auth(token), timeout=60)
        sizes.append(reply.ByteSize())
        return reply

    return reassemble(fetch), sizes


def test_a_record_over_the_grpc_limit_comes_in_bounded_pieces(
    arena_service: Running, tmp_path: Path, chatty_record
) -> None:
    mid, seat = chatty_match(arena_service, tmp_path, chatty_record)
    stored = arena_service.service.store.replay(mid)
    ann = add_owner(arena_service.service.store, "ann")
    stub = arena_service.stub()

    # the CLI reads the pieces and checks the whole (before pieces: RESOURCE_EXHAUSTED, over 4 MiB)
    client = tmp_path / "client"
    client.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(
        PYTHONPATH=str(REPO), ARENA_HOME=str(client), ARENA_SERVER=arena_service.address, ARENA_API_TOKEN=ann
    )
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "replay", "show", str(mid), "--private", "--logs", "--seat", str(seat)],
        capture_output=True, text=True, env=env, cwd=client, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"chatty seat {seat} " in done.stdout and len(done.stdout) > 6_000_000

    # the owner's private record: their seat's logs, over 4 MiB, in pieces that each fit
    mine = private_record_bytes(stored, [seat])
    assert len(mine) > 4 * 1024 * 1024
    whole, sizes = read_in_pieces(stub, pb.GetReplayRequest(match_id=mid, private=True), ann)
    assert whole == mine and len(sizes) == -(-len(mine) // PIECE)
    assert max(sizes) <= PIECE + OVERHEAD, sizes
    record = decode_record(whole)
    assert {log.seat for log in record.logs} == {seat}
    assert any(log.text.startswith(f"chatty seat {seat} ") for log in record.logs)

    # the admin's: both seats, twice as long
    both, sizes = read_in_pieces(stub, pb.GetReplayRequest(match_id=mid, private=True), ADMIN)
    assert both == private_record_bytes(stored, [0, 1]) and max(sizes) <= PIECE + OVERHEAD
    assert {log.seat for log in decode_record(both).logs} == {0, 1}

    # the public record is short: it comes whole in the first reply, as before pieces
    public = stub.GetReplay(pb.GetReplayRequest(match_id=mid), timeout=60)
    assert public.record == public_record_bytes(stored) and public.next_offset == 0
    assert public.total_size == len(public.record) and not decode_record(public.record).logs

    # an offset past the end is a named INVALID_ARGUMENT, not a traceback
    with pytest.raises(grpc.RpcError) as err:
        stub.GetReplay(pb.GetReplayRequest(match_id=mid, offset=len(mine) + 1), timeout=60)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"offset {len(mine) + 1}: the record is" in err.value.details()
