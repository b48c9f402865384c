"""The turn protocol's version: the one number the referee speaks (`Welcome.protocol_version`) and
the SDK and the stdio bridge join with (`Join.protocol_version`), as `referee.proto` states it.
Hand-written beside the generated modules, like `codec.py`: every layer that speaks the protocol
may import the proto package, so the number lives here once."""

PROTOCOL_VERSION = 1
