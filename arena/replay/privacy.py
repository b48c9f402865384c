"""The public form of a match record: what anyone may download once the match is revealed.

A record carries the bots' own words: their `Log` lines, and (once the records format has them)
the verdict details that quote bot output (`ResultRecord.private_details`) and the name a bot gave
itself (`PlayerRecord.self_reported_name`). Those reach only the bot's owner and the admin; every
public download serves `public_record_bytes` (docs/security.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.proto import replay_pb2
from arena.proto.codec import decode_record, encode_record


def _clear(message, field: str) -> None:  # noqa: ANN001 - any protobuf message
    """Clear `field` if this build of the record format has it."""
    if field in message.DESCRIPTOR.fields_by_name:
        message.ClearField(field)


def public_record(record: replay_pb2.MatchRecord) -> replay_pb2.MatchRecord:
    """A copy without the logs, the private verdict details and the self-reported names."""
    out = replay_pb2.MatchRecord()
    out.CopyFrom(record)
    out.ClearField("logs")
    _clear(out.result, "private_details")
    for player in out.players:
        _clear(player, "self_reported_name")
    return out


def private_record(record: replay_pb2.MatchRecord, seats: Iterable[int]) -> replay_pb2.MatchRecord:
    """A copy with the private fields of `seats` only (an owner's own seats; both for the admin)."""
    keep = set(seats)
    out = replay_pb2.MatchRecord()
    out.CopyFrom(record)
    logs = [entry for entry in out.logs if entry.seat in keep]
    out.ClearField("logs")
    out.logs.extend(logs)
    if "private_details" in out.result.DESCRIPTOR.fields_by_name and out.HasField("result"):
        for seat in range(len(out.result.private_details)):
            if seat not in keep:
                out.result.private_details[seat] = ""
    for player in out.players:
        if player.seat not in keep:
            _clear(player, "self_reported_name")
    return out


def public_record_bytes(data: bytes) -> bytes:
    """`public_record` of an encoded record, encoded again (raises RecordError on bad bytes)."""
    return encode_record(public_record(decode_record(data)))
