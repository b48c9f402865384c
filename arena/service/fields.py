"""Every string of a request within its maximum (`arena.limits`), checked before the operation runs.

One walk over the message's fields, so a field added to the .proto is bounded from the start (by
`arena.limits.TEXT` until the table names it): strings, repeated strings (each item), map keys, and the
strings of nested messages. The error names the field, its maximum and the length given.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.limits import FieldTooLong, request_limit
from arena.service.errors import InvalidArgument


def check_fields(message: Message) -> None:
    """INVALID_ARGUMENT for the first string of `message` (nested ones too) over its maximum."""
    try:
        _walk(message)
    except FieldTooLong as exc:
        raise InvalidArgument(str(exc)) from None


def _walk(message: Message) -> None:
    for field, value in message.ListFields():
        if field.type == FieldDescriptor.TYPE_STRING:
            for text in value if field.is_repeated else (value,):
                request_limit(field.name).check(text, field.name)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                _map(field, value)
            else:
                for item in value if field.is_repeated else (value,):
                    _walk(item)


def _map(field: FieldDescriptor, value: Any) -> None:
    """A map field: its string keys under the map's name, its message values walked."""
    for key in value:
        if isinstance(key, str):
            request_limit(field.name).check(key, field.name)
        item = value[key]
        if isinstance(item, Message):
            _walk(item)
