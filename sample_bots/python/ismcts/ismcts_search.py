"""Information-set Monte Carlo tree search (single-observer ISMCTS, Cowling, Powley and Whitehouse 2012).

One tree over this seat's information set: each iteration deals the hidden cards out anew, walks the
tree along the cards that are legal in that world (UCB1 with availability counts, so a card is judged
only against the worlds where it could be played), adds one node, plays the rest of phase 1 forward with
a quick policy for both sides (greedy, with a random card now and then), solves phase 2 exactly and
backs up the honours each side ends with. The search itself is `sim.ismcts`, in the compiled core when
it is built (a pure-Python twin gives the same answer; the core is about 4x cheaper than this file's
own tree walk was). At the root in phase 2 the bot just solves (nothing is hidden there).

It grows `TREES` independent trees of `ITERATIONS` each and plays the card most visited over all of
them: the spread of five small trees' root counts averages out, where one tree five times as large
would grow deeper. Measured against the oracle (docs/analysis.md), a deeper tree is not a stronger
one here: one tree of 10,000 iterations played clearly worse than one of 2,000 (its later cards
ignore what each side will draw), and so did a depth limit of 4 or of 1 (no opponent reply in the
tree); a limit of 2 with 10,000 iterations played as one tree of 2,000.

The work per move is a number of iterations (`TREES` x `ITERATIONS`), never seconds: the same seed
gives the same card on any machine, and the budget keeps a move far inside the default one-second
clock (a median of 54 ms of CPU, at most 77 ms, in the compiled core).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.sdk import sim

Stats = dict[int, tuple[int, float]]  # card -> (visits, reward sum) at a root

ITERATIONS = 2000
EXPLORE = 0.7  # UCB1's exploration constant, on rewards scaled to 0..1 (honours / 20)
EPSILON = 0.3  # share of random cards in the rollouts (as pimc's; 0.15, 0.45: no better; 0.6: worse)
DEPTH = 32  # the tree's depth in cards (32: no limit)
TREES = 5  # independent trees whose root visits are summed


def choose(
    k: sim.Knowledge,
    rng: random.Random,
    iterations: int | None = None,
    search: Callable[..., Stats] = sim.ismcts,
) -> int:
    """The card to play for the seat of `k` (an engine int): the most visited one at the roots.
    `iterations` per tree defaults to ITERATIONS; `search` is `sim.ismcts` or one with its arguments
    (the strength bench passes one that is shown the hidden cards, to measure what they are worth)."""
    iterations = ITERATIONS if iterations is None else iterations
    first, forced = sim.settled(k, rng)  # one legal card, or phase 2 solved exactly
    if forced is not None:
        return forced
    totals: dict[int, tuple[int, float]] = {}
    for _ in range(TREES):
        for c, (v, r) in search(k, rng.getrandbits(63), iterations, EXPLORE, EPSILON, DEPTH).items():
            v0, r0 = totals.get(c, (0, 0.0))
            totals[c] = (v0 + v, r0 + r)
    return max(first.legal_cards(), key=lambda c: (*totals.get(c, (0, 0.0)), -c))
