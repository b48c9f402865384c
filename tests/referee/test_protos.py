"""The committed generated code matches the .proto files, and the record framing round-trips."""

from __future__ import annotations

import subprocess
import sys

import pytest

from arena.proto import codec, replay_pb2


def test_generated_code_is_fresh(repo_root):
    res = subprocess.run(
        [sys.executable, str(repo_root / "scripts" / "gen_protos.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr


def test_record_round_trip_and_strip_timing():
    rec = replay_pb2.MatchRecord(format=1, match_id="m1", seed=7)
    deal = rec.deals.add(number=1, dealer=0, deck=["AS"] * 32)
    deal.plays.add(seat=1, card="AS", think_us=1234)
    rec.timing.duration_ms = 55
    data = codec.encode_record(rec)
    assert data.startswith(codec.MAGIC)
    assert codec.decode_record(data) == rec
    bare = codec.strip_timing(rec)
    assert bare.deals[0].plays[0].think_us == 0 and not bare.HasField("timing")
    assert rec.deals[0].plays[0].think_us == 1234  # the original is untouched


@pytest.mark.parametrize("data", [b"", b"{}", codec.MAGIC + b"garbage"])
def test_decode_rejects_non_records(data):
    with pytest.raises(codec.RecordError):
        codec.decode_record(data)
