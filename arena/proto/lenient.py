"""Request deserializers that never raise, for every gRPC service the arena registers by hand.

gRPC answers a deserializer that raises with UNKNOWN, which tells a caller nothing. These hand the
servicer an `Undecodable` instead, and the servicer answers INVALID_ARGUMENT naming the message.
Hand-written, like codec.py: everything else in arena/proto/ is generated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Undecodable:
    """What bytes that are not a valid `message_type` (its full name) deserialize to."""

    def __init__(self, message_type: str) -> None:
        self.message_type = message_type

    @property
    def type_name(self) -> str:
        """The message's short name, e.g. `CreateMatchRequest`."""
        return self.message_type.rsplit(".", 1)[-1]

    def WhichOneof(self, _: str) -> None:  # noqa: N802 - looks like a message to stream readers
        return None


def lenient(message: Any) -> Callable[[bytes], Any]:
    """`message.FromString`, but garbage becomes an `Undecodable` instead of an exception."""
    full_name = message.DESCRIPTOR.full_name

    def parse(data: bytes) -> Any:
        try:
            return message.FromString(data)
        except Exception:  # DecodeError, and anything a hostile encoding could raise
            return Undecodable(full_name)

    return parse
