"""The stdio line protocol's translation (docs/stdio.md): a RefereeMessage to the one JSON line a
stdio bot reads, and a line it wrote back to a BotMessage. Hand-written beside the generated modules,
like `codec.py`, so that both users share one implementation: the SDK's bridge
(`arena.sdk.stdio_bridge`, a bot author's own machine and the Docker launcher) and the referee's
in-process stdio seat (`arena.referee.stdio_seat`, the bwrap and local launchers).
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor

from arena.proto import referee_pb2 as pb

MAX_LINE = 16 * 1024  # a bot's line, like a gRPC message from a bot, is at most 16 KiB
CUT_LINE = 64  # what is kept of a longer line: it becomes a bad card, quoted this far
UINT64_FIELDS = ("turn_id", "bot_seed")  # TurnRequest.turn_id, Welcome.bot_seed


def _in_field_order(descriptor: Descriptor, data: dict[str, Any]) -> dict[str, Any]:
    """Keys in referee.proto's field order at every level, so a bot that scans the line for a
    name (as the C sample does) finds View.lead_card before the lead_card of any finished trick."""
    out: dict[str, Any] = {}
    for field in descriptor.fields:
        if field.name not in data:
            continue
        value = data[field.name]
        if field.message_type is not None:
            if isinstance(value, list):
                value = [_in_field_order(field.message_type, v) for v in value]
            else:
                value = _in_field_order(field.message_type, value)
        out[field.name] = value
    return out


def referee_line(message: pb.RefereeMessage) -> str:
    """One RefereeMessage as the JSON line the bot reads: the oneof's name as "type", then that
    message's fields (referee.proto names and order, every field present). The 64-bit fields
    turn_id and bot_seed are JSON numbers (protobuf's JSON mapping would quote them)."""
    kind = message.WhichOneof("msg") or "unknown"
    inner = getattr(message, kind)
    body = json_format.MessageToDict(
        inner, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    body = _in_field_order(inner.DESCRIPTOR, body)
    for key in UINT64_FIELDS:
        if key in body:
            body[key] = int(body[key])
    return json.dumps({"type": kind, **body}, separators=(",", ":")) + "\n"


def bot_message(line: str, current_turn: int) -> pb.BotMessage:
    """The BotMessage for one line the bot wrote. Anything malformed becomes an Action whose card
    is the offending text, so that the referee, not the translation, rules on it (PROTOCOL_ERROR)."""
    text = line.strip()
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("log"), str) and "card" not in data:
        return pb.BotMessage(log=pb.Log(text=data["log"]))
    if isinstance(data, dict) and isinstance(data.get("card"), str):
        turn = data.get("turn_id", current_turn)
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
            turn = current_turn
        return pb.BotMessage(action=pb.Action(turn_id=turn, card=data["card"]))
    return pb.BotMessage(action=pb.Action(turn_id=current_turn, card=text[:64] or "<empty line>"))


def raw_bot_message(raw: bytes, current_turn: int) -> pb.BotMessage:
    """`bot_message` for the bytes of one read of at most MAX_LINE + 1 bytes up to a newline: a
    longer line (no newline within MAX_LINE) is cut to CUT_LINE bytes, so it is a bad line."""
    if len(raw) > MAX_LINE:
        raw = raw[:CUT_LINE]
    return bot_message(raw.decode("utf-8", errors="replace"), current_turn)
