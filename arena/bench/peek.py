"""The ismcts sample bot shown the hidden cards: what they are worth to the same search (a bench only).

`arena bench strength --peek` plays two more rows on the same deals as the bots: `ismcts+hand`, whose
search knows the opponent's hand (the stock is still dealt out anew every iteration), and `ismcts+all`,
whose search knows the stock's order as well: all that the oracle sees. Each is the sample bundle's own
bot, with its seeds and budget; only its search (`arena.analysis.ismcts.search`) is given `peek` and the
unknown cards in their true places, read from the live deal. The distance between the three rows is
what the hidden cards cost the search, which no bot can win back by searching better.

No bot can do this: `arena.sdk.sim.ismcts` takes no `peek`, a bot's view holds no hidden card, and
nothing under arena/bench is bound into the sandbox (tests/bench/test_bench_strength.py).
"""

from __future__ import annotations

import importlib
from functools import partial

from arena.analysis.ismcts import search
from arena.bench.strength import Player, load_bot
from arena.engine.deal import Deal
from arena.sdk import Bot, View, sim

PEEKS = {"ismcts+hand": "hand", "ismcts+all": "all"}  # row name -> what its search is shown


def true_order(deal: Deal, seat: int) -> list[int]:
    """The cards `seat` cannot see, in their places: the opponent's hand (ascending), then the stock top
    first, the turned trump left out (it lies face up under the stock)."""
    stock = list(deal.stock)
    if deal.trump_card is not None and stock and stock[-1] == deal.trump_card:
        stock.pop()
    return [c for c in range(32) if deal.hands[1 - seat] >> c & 1] + stock


def peeking_players() -> dict[str, Player]:
    """Each peeking row's bot maker, and the `watch` that shows a fresh bot the live deal."""
    bundle = load_bot("ismcts")  # puts the bundle's folder on sys.path, where its search module is
    choose = importlib.import_module("ismcts_search").choose
    players: dict[str, Player] = {}
    for name, peek in PEEKS.items():

        class Peeking(bundle):  # type: ignore[misc, valid-type]  # the bundle's class, loaded at run time
            kind = peek
            deal: Deal | None = None

            def play(self, view: View) -> str:
                k = sim.knowledge(view, self.rules)
                assert self.deal is not None, "the bench shows a peeking bot its deal first"
                shown = partial(search, peek=self.kind, order=true_order(self.deal, k.seat))
                return sim.code(choose(k, self.rng, search=shown))

        players[name] = (Peeking, _show)
    return players


def _show(bot: Bot, deal: Deal) -> None:
    bot.deal = deal  # type: ignore[attr-defined]  # the Peeking class above declares it
