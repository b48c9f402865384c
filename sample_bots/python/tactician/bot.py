"""The tactician sample bot: classical Elfern tactics in phase 1, exact play in phase 2.

The strategy lives in tactics.py and endgame.py as pure functions over a `Position`; this file
only translates the SDK's view into one.
"""

from elfcards import Position, parse
from tactics import choose

from arena.sdk import Bot, View, run


def position(view: View, must_head: bool = False) -> Position:
    """What the SDK view tells, in the tactician's terms (cards as ints, suits as indexes)."""
    return Position(
        hand=frozenset(parse(c) for c in view.hand),
        legal=tuple(parse(c) for c in view.legal),
        lead=parse(view.lead_card) if view.lead_card else None,
        seen=frozenset(parse(c) for c in view.played),
        stock=0 if view.phase == 2 else view.stock_size,
        my_points=view.my_honours,
        opp_points=view.opponent_honours,
        trump="CDHS".index(view.trump_suit) if view.trump_suit else None,
        trump_card=parse(view.trump_card) if view.trump_card else None,
        must_head=must_head,
        drawn=frozenset(parse(c) for c in view.drawn),
    )


class TacticianBot(Bot):
    name = "tactician"
    version = "1"

    def play(self, view: View) -> str:
        must_head = bool(self.rules and self.rules.must_head_phase2)
        # Think for at most a third of the free move time (the rest is slack for a busy machine).
        card = choose(position(view, must_head), budget=max(0.05, view.move_seconds / 3))
        return view.legal[[parse(c) for c in view.legal].index(card)]


if __name__ == "__main__":
    run(TacticianBot())
