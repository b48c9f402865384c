"""The Python bot SDK: subclass `Bot`, implement `play(view)`, call `run(MyBot())`.

    from arena.sdk import Bot, run

    class Lowest(Bot):
        def play(self, view):
            return min(view.legal, key=cards.rank_value)

    run(Lowest())

Imports only arena.proto (layers): a bot never sees the engine.
"""

from arena.sdk import cards
from arena.sdk.bot import Bot, run
from arena.sdk.view import Trick, View

__all__ = ["Bot", "Trick", "View", "cards", "run"]
