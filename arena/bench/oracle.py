"""The omniscient oracle: it sees both hands and the stock. A yardstick for `arena bench strength` only.

It is not a bot bundle and can never be entered in a season or a compare: it plays in-process on the
engine's `Deal`, reading the hidden cards no seat may see (docs/rules.md §8), and nothing under
arena/bench is bound into the bot sandbox (tests/bench/test_strength.py checks both).

How it plays: phase 2 exactly (the solver). In phase 1 it scores each legal card in the one true world:
when it leads, against the opponent's best reply; then the rest of phase 1 is played forward by
`sim.greedy` for both sides and the start of phase 2 is solved exactly. That is PIMC with the real
deal instead of sampled ones, so the gap between a bot and the oracle is what the hidden cards cost it.
"""

from __future__ import annotations

from arena.analysis.worlds import World
from arena.engine.deal import Deal
from arena.sdk.sim import final_honours, fork, greedy, play_forward, solve


def _after(world: World, card: int, seat: int) -> int:
    line = fork(world)
    line.play(card)
    if line.table is not None:  # it led: the opponent answers with its best reply
        worst = 20
        for reply in line.legal_cards():
            answered = fork(line)
            answered.play(reply)
            worst = min(worst, final_honours(play_forward(answered, greedy), seat))
        return worst
    return final_honours(play_forward(line, greedy), seat)


def oracle_card(deal: Deal) -> int:
    """The oracle's card for the side to move of a live deal (which it reads in full)."""
    seat = deal.to_move
    assert seat is not None, "the deal is over"
    legal = deal.legal_cards()
    if len(legal) == 1:
        return legal[0]
    world = World.from_deal(deal)
    if deal.stock_count == 0:
        values = solve(world)
        return max(legal, key=lambda c: (values[c], -c))
    return max(legal, key=lambda c: (_after(world, c, seat), -c))
