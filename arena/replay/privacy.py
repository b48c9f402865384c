"""The two forms of a match record: the full one (its bots' owners and the admin) and the public one.

A record's private fields are those that quote a bot's own text (replay.proto marks them): the `Log`
lines, the verdicts' private details (the card text a bot sent, the last lines of its output) and the
name each bot gave itself in its `Join`. The public form is the same record without them, field for
field, so it still re-simulates and `arena replay verify` still checks its decks and commitment. An
owner's form keeps the private fields of the owner's own seats only.
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.proto import replay_pb2
from arena.proto.codec import decode_record, encode_record


def public_record(record: replay_pb2.MatchRecord) -> replay_pb2.MatchRecord:
    """A copy without `logs`, `result.private_details` and `players[].self_reported_name`."""
    out = replay_pb2.MatchRecord()
    out.CopyFrom(record)
    out.ClearField("logs")
    if out.HasField("result"):  # (touching an unset result would set it)
        out.result.ClearField("private_details")
    for player in out.players:
        player.ClearField("self_reported_name")
    return out


def private_record(record: replay_pb2.MatchRecord, seats: Iterable[int]) -> replay_pb2.MatchRecord:
    """A copy with the private fields of `seats` only (an owner's own seats; both for the admin):
    the other seat's Log lines, private detail and self-reported name are cleared as in the public form."""
    keep = set(seats)
    out = replay_pb2.MatchRecord()
    out.CopyFrom(record)
    logs = [entry for entry in out.logs if entry.seat in keep]
    out.ClearField("logs")
    out.logs.extend(logs)
    if out.HasField("result"):
        for seat in range(len(out.result.private_details)):
            if seat not in keep:
                out.result.private_details[seat] = ""
    for player in out.players:
        if player.seat not in keep:
            player.ClearField("self_reported_name")
    return out


def public_record_bytes(data: bytes) -> bytes:
    """The public form of a framed record (arena.proto.codec); RecordError for bytes that are not one."""
    return encode_record(public_record(decode_record(data)))


def private_record_bytes(data: bytes, seats: Iterable[int]) -> bytes:
    """The form of a framed record for the owner of `seats`; RecordError for bytes that are not one."""
    return encode_record(private_record(decode_record(data), seats))


def is_public(record: replay_pb2.MatchRecord) -> bool:
    """True when the record holds none of the private fields (an empty string counts as none)."""
    return (
        not record.logs
        and not any(record.result.private_details)
        and not any(p.self_reported_name for p in record.players)
    )
