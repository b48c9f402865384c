"""The omniscient oracle: it sees both hands and the stock. A yardstick for `arena bench strength` only.

It is not a bot bundle and can never be entered in a season or a compare: it plays in-process on the
engine's `Deal`, reading the hidden cards no seat may see (docs/rules.md §8), and nothing under
arena/bench is bound into the bot sandbox (tests/bench/test_bench_strength.py checks both).

How it plays: phase 2 exactly (the solver). In phase 1 it scores each legal card in the one true world:
when it leads, against the opponent's best reply; each line is played on to phase 2 by noisy greedy
playouts for both sides (`sim.playout_value`, as pimc's: greedy with a random card 30% of the time)
and the start of phase 2 is solved exactly. That is pimc's search with the real deal instead of
sampled ones and with a best reply to every lead, so the gap between a bot and the oracle is mostly
what the hidden cards cost it. It is a ceiling of this family of searches, not of perfect play: a full
search of phase 1 is out of reach here. (Its playouts ran in Python until the compiled core got them:
the same policy and counts, other random numbers, and about 5x less CPU per deal.)
"""

from __future__ import annotations

import random

from arena.analysis.worlds import World
from arena.engine.deal import Deal
from arena.sdk.sim import fork, playout_value, solve

PLAYOUTS = 16  # playouts per line (a line: its card, and when it leads, the reply)
EPSILON = 0.3  # the share of random cards in them, as pimc's


def _line_value(world: World, seat: int, rng: random.Random, playouts: int) -> float:
    """The mean of `seat`'s final honours over noisy greedy playouts to phase 2, then exact play (in the
    compiled core when it is built: `sim.playout_value`, one seed per playout from `rng`)."""
    total = 0
    for _ in range(playouts):
        total += playout_value(world, seat, rng.getrandbits(63), EPSILON)
    return total / playouts


def _after(world: World, card: int, seat: int, rng: random.Random, playouts: int) -> float:
    line = fork(world)
    line.play(card)
    if line.table is not None:  # it led: the opponent answers with the reply that is best for it
        worst = 20.0
        for reply in line.legal_cards():
            answered = fork(line)
            answered.play(reply)
            worst = min(worst, _line_value(answered, seat, rng, playouts))
        return worst
    return _line_value(line, seat, rng, playouts)


def oracle_card(deal: Deal, playouts: int = PLAYOUTS) -> int:
    """The oracle's card for the side to move of a live deal (which it reads in full). Deterministic:
    its playouts are seeded from the deal's deck and the number of cards played. `playouts` per line:
    more make a stronger yardstick (less noise in its own choices); figures compare only at one count."""
    seat = deal.to_move
    assert seat is not None, "the deal is over"
    legal = deal.legal_cards()
    if len(legal) == 1:
        return legal[0]
    world = World.from_deal(deal)
    if deal.stock_count == 0:
        values = solve(world)
        return max(legal, key=lambda c: (values[c], -c))
    rng = random.Random(f"oracle/{deal.deck}/{len(deal.plays)}")
    return max(legal, key=lambda c: (_after(world, c, seat, rng, playouts), -c))
