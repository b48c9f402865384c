"""Joins properly, then answers its first turn with an action just over the referee's 16 KiB cap
(16 KiB + 512 bytes). A bot's socket lets gRPC take messages up to 17 KiB so that this one reaches
the referee's check and is a PROTOCOL_ERROR; a bigger one is refused inside gRPC (docs/referee.md)."""

from arena.sdk import Bot, run


class Oversized(Bot):
    def play(self, view):
        return "A" * (16 * 1024 + 512)


run(Oversized())
