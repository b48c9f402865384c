"""The greedy sample bot: wins honours when that is cheap (see greedy_strategy.py)."""

from greedy_strategy import choose

from arena.sdk import Bot, run


class GreedyBot(Bot):
    name = "greedy"
    version = "1"

    def play(self, view):
        return choose(view.legal, view.lead_card, view.trump_suit)


if __name__ == "__main__":
    run(GreedyBot())
