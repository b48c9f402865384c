"""Joins, then spins on its first turn and never answers."""

from arena.sdk import Bot, run


class Spin(Bot):
    def play(self, view):
        x = 0
        while True:
            x += 1


run(Spin())
