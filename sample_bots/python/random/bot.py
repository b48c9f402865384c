"""Plays a uniformly random legal card. Its choices repeat for the same match id and seat."""

import random

from arena.sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1"

    def play(self, view):
        if not hasattr(self, "rng"):
            self.rng = random.Random(f"{self.match_id}/{self.seat}")
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    run(RandomBot())
