"""Plays a uniformly random legal card, drawn from `self.rng`: the SDK seeds it with the Welcome's
bot_seed, so the same match seed (`arena play ... --seed N`) gives the same cards."""

from arena.sdk import Bot, run


class RandomBot(Bot):
    name = "random"
    version = "1"

    def play(self, view):
        return self.rng.choice(view.legal)


if __name__ == "__main__":
    run(RandomBot())
