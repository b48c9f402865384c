"""The pimc sample bot: perfect-information Monte Carlo over worlds consistent with its view.

The search is in pimc_search.py; this file picks its generator: the SDK's `self.rng` (seeded from
Welcome.bot_seed) when the SDK provides one, else one seeded from this move's view, so that the same
match gives the same cards either way.
"""

import random

from pimc_search import choose

from arena.sdk import Bot, View, run, sim


def view_seed(view: View) -> str:
    """A seed that depends only on what the view shows (so a replayed match replays the same cards)."""
    return "/".join(
        [
            str(view.seat),
            str(view.deal_number),
            str(view.trick_number),
            " ".join(view.hand),
            " ".join(view.played),
        ]
    )


class PimcBot(Bot):
    name = "pimc"
    version = "1"

    def play(self, view: View) -> str:
        rng = getattr(self, "rng", None) or random.Random(view_seed(view))
        k = sim.knowledge(view, self.rules)
        return sim.code(choose(k, rng))


if __name__ == "__main__":
    run(PimcBot())
