"""Joins properly, then answers its first turn with a 1 MiB + 1 KiB action (the referee's cap is
16 KiB; gRPC's own limit used to be 1 MiB, which made this a CRASH instead of a PROTOCOL_ERROR)."""

from arena.sdk import Bot, run


class Oversized(Bot):
    def play(self, view):
        return "A" * ((1 << 20) + 1024)


run(Oversized())
