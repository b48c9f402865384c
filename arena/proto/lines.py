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
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from arena.proto import referee_pb2 as pb

MAX_LINE = 16 * 1024  # a bot's line, like a gRPC message from a bot, is at most 16 KiB
CUT_LINE = 64  # what is kept of a longer line: it becomes a bad card, quoted this far
UINT64_FIELDS = ("turn_id", "bot_seed")  # TurnRequest.turn_id, Welcome.bot_seed


#: Field types whose JSON form is the Python value itself (64-bit integers: a string, as protobuf's JSON
#: mapping writes them). A message with any other type (float, bytes, enum) takes json_format's way.
_PLAIN_TYPES = {
    FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_INT32,
    FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_FIXED32,
    FieldDescriptor.TYPE_SFIXED32, FieldDescriptor.TYPE_MESSAGE,
}  # fmt: skip
_WIDE_TYPES = {
    FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED64,
}  # fmt: skip
_Plan = list[tuple[str, Descriptor | None, bool, bool]]  # (name, message type, repeated, 64-bit)
_plans: dict[Descriptor, _Plan | None] = {}


def _plan(descriptor: Descriptor) -> _Plan | None:
    """Each field of a message type in referee.proto's order, or None when one of its types (at any
    depth) is not plain; computed once per type."""
    if descriptor not in _plans:
        _plans[descriptor] = None  # a recursive type is not plain
        plan: _Plan = []
        for field in descriptor.fields:
            wide = field.type in _WIDE_TYPES
            nested = field.message_type
            if not (wide or field.type in _PLAIN_TYPES) or (nested is not None and _plan(nested) is None):
                return None
            plan.append((field.name, nested, field.is_repeated, wide))
        _plans[descriptor] = plan
    return _plans[descriptor]


def _fields(message: Any, plan: _Plan) -> dict[str, Any]:
    """What json_format.MessageToDict gives with referee.proto's names and every field without
    presence printed, keys in the proto's field order: a singular message field only when set."""
    out: dict[str, Any] = {}
    for name, nested, repeated, wide in plan:
        value = getattr(message, name)
        if nested is not None:
            sub = _plans[nested]
            assert sub is not None  # _plan checked every nested type
            if repeated:
                out[name] = [_fields(item, sub) for item in value]
            elif message.HasField(name):
                out[name] = _fields(value, sub)
        elif repeated:
            out[name] = [str(item) for item in value] if wide else list(value)
        else:
            out[name] = str(value) if wide else value
    return out


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
    turn_id and bot_seed are JSON numbers (protobuf's JSON mapping would quote them). Read straight
    off the message's fields, 3x faster than json_format (it is on every move of a stdio bot);
    the same text, byte for byte, which tests/proto/test_lines.py checks against json_format."""
    kind = message.WhichOneof("msg") or "unknown"
    inner = getattr(message, kind)
    plan = _plan(inner.DESCRIPTOR)
    body = _fields(inner, plan) if plan is not None else json_dict(inner)
    for key in UINT64_FIELDS:
        if key in body:
            body[key] = int(body[key])
    return json.dumps({"type": kind, **body}, separators=(",", ":")) + "\n"


def json_dict(message: Any) -> dict[str, Any]:
    """A message's fields through protobuf's own JSON mapping, in referee.proto's order: the way for
    a type `_plan` does not cover, and the reference the faster way is tested against."""
    body = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    return _in_field_order(message.DESCRIPTOR, body)


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


def referee_message(line: str | bytes) -> pb.RefereeMessage:
    """The RefereeMessage one referee line stands for: `referee_line` read back, as the Python SDK's
    stdio transport reads it (keys it does not know are skipped, so an older SDK reads a newer
    referee's lines). Raises ValueError on a line that is not one."""
    data = json.loads(line)
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ValueError(f"not a referee line: {str(line)[:CUT_LINE]!r}")
    kind = data.pop("type")
    message = pb.RefereeMessage()
    if kind not in pb.RefereeMessage.DESCRIPTOR.fields_by_name:
        return message  # a message type this SDK does not know: nothing set, read and ignored
    inner = getattr(message, kind)
    inner.SetInParent()
    try:
        _fill(inner, data)
    except (TypeError, AttributeError) as exc:  # a value of the wrong type
        raise ValueError(f"not a referee line: {exc}") from None
    return message


def _fill(message: Any, data: dict[str, Any]) -> None:
    """`message`'s fields from a line's object, read by `_plan` as `_fields` wrote them, 10x faster
    than json_format.ParseDict (on every message a Python stdio bot reads); keys it does not know
    are skipped. A type `_plan` does not cover takes json_format's way."""
    plan = _plan(message.DESCRIPTOR)
    if plan is None:
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
        return
    for name, nested, repeated, wide in plan:
        if name not in data:
            continue
        value = data[name]
        if nested is not None:
            if repeated:
                items = getattr(message, name)
                for item in value:
                    _fill(items.add(), item)
            else:
                sub = getattr(message, name)
                sub.SetInParent()
                _fill(sub, value)
        elif repeated:
            getattr(message, name).extend([int(v) for v in value] if wide else value)
        else:
            setattr(message, name, int(value) if wide else value)


def bot_line(message: pb.BotMessage) -> str:
    """One BotMessage as the line a stdio bot writes: an Action as {"card", "turn_id"}, a Log as
    {"log"} (a Join has no line: the stdio seat joins as the bot is started)."""
    kind = message.WhichOneof("msg")
    if kind == "action":
        body: dict[str, Any] = {"card": message.action.card, "turn_id": message.action.turn_id}
    elif kind == "log":
        body = {"log": message.log.text}
    else:
        raise ValueError(f"a stdio bot sends no {kind} message")
    return json.dumps(body, separators=(",", ":")) + "\n"
