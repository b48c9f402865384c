"""The pimc sample bot: perfect-information Monte Carlo over worlds consistent with its view.

The search is in pimc_search.py. Every random choice comes from the SDK's `self.rng`, seeded from
Welcome.bot_seed, so that the same match seed gives the same cards.
"""

from pimc_search import choose

from arena.sdk import Bot, View, run, sim


class PimcBot(Bot):
    name = "pimc"
    version = "1"

    def play(self, view: View) -> str:
        k = sim.knowledge(view, self.rules)
        return sim.code(choose(k, self.rng))


if __name__ == "__main__":
    run(PimcBot())
