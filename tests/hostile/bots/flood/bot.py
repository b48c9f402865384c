"""Floods stdout and stderr without end on its first turn."""

import os

from arena.sdk import Bot, run


class Flood(Bot):
    def play(self, view):
        line = b"flood " * 170 + b"\n"
        while True:
            os.write(1, line)
            os.write(2, line)


run(Flood())
