"""The framing of a match record file: magic, then a zlib-compressed `MatchRecord`.

One of the two hand-written modules in arena/proto/ (with lenient.py): the referee writes records and the replay
tools read them, and both may import arena.proto but not each other.
"""

from __future__ import annotations

import zlib

from arena.proto import replay_pb2

MAGIC = b"ELFREC1\n"
FORMAT = 1
#: The most a record may decompress to. The longest real match (10,000 deals of 24 plays, with
#: think times and log lines) stays well inside; a zlib bomb stops here instead of filling memory.
MAX_RECORD_BYTES = 32 * 1024 * 1024


class RecordError(ValueError):
    """Bytes that are not a match record (wrong magic, corrupt data, newer format)."""


def encode_record(record: replay_pb2.MatchRecord) -> bytes:
    """Serialize deterministically and compress: the same record always gives the same bytes."""
    return MAGIC + zlib.compress(record.SerializeToString(deterministic=True), 9)


def decode_record(data: bytes) -> replay_pb2.MatchRecord:
    """Parse bytes written by `encode_record`."""
    if not data.startswith(MAGIC):
        raise RecordError("not an Elfern match record (bad magic); expected a file written by the referee")
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(data[len(MAGIC) :], MAX_RECORD_BYTES)
        if inflate.unconsumed_tail:  # checked as it is read: never more than the cap in memory
            raise RecordError(
                f"the record decompresses to more than {MAX_RECORD_BYTES // (1024 * 1024)} MiB; "
                "it is not a match record (a compression bomb?)"
            )
        if not inflate.eof:
            raise RecordError("corrupt match record: the compressed data is truncated")
        record = replay_pb2.MatchRecord.FromString(raw)
    except RecordError:
        raise
    except (zlib.error, Exception) as exc:  # protobuf raises DecodeError, a plain Exception subclass
        raise RecordError(f"corrupt match record: {exc}") from None
    if record.format > FORMAT:
        raise RecordError(f"record format {record.format} is newer than this arena understands ({FORMAT})")
    return record


def strip_timing(record: replay_pb2.MatchRecord) -> replay_pb2.MatchRecord:
    """A copy without the wall-clock fields, so that two runs of the same match compare equal; also
    without the bots' captured stdout/stderr (logs with source "output"), which no protocol orders
    (a runtime's warning may or may not appear) and which may well print times."""
    out = replay_pb2.MatchRecord()
    out.CopyFrom(record)
    out.ClearField("timing")
    for deal in out.deals:
        for play in deal.plays:
            play.think_us = 0
    logs = [entry for entry in out.logs if not entry.source]
    if len(logs) != len(out.logs):
        out.ClearField("logs")
        out.logs.extend(logs)
    return out
