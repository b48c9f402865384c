"""Joins properly, then answers its first turn with a 64 KiB action (the cap is 16 KiB)."""
from arena.sdk import Bot, run


class Oversized(Bot):
    def play(self, view):
        return "A" * (64 << 10)


run(Oversized())
