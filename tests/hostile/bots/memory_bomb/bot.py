"""Joins, then allocates and touches memory until something stops it."""

from arena.sdk import Bot, run


class MemoryBomb(Bot):
    def play(self, view):
        hog = []
        while True:
            chunk = bytearray(8 << 20)
            for i in range(0, len(chunk), 4096):
                chunk[i] = 1
            hog.append(chunk)


run(MemoryBomb())
