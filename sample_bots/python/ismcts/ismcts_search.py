"""Information-set Monte Carlo tree search (single-observer ISMCTS, Cowling, Powley and Whitehouse 2012).

One tree over this seat's information set: each iteration deals the hidden cards out anew
(`sim.sample_world`), walks the tree along the cards that are legal in that world (UCB1 with
availability counts, so a card is judged only against the worlds where it could be played), adds one
node, plays the rest of phase 1 forward with a quick policy for both sides (`sim.greedy`), solves phase 2
exactly (both in `sim.playout_value`, in the compiled core when it is built) and backs up the honours
each side ends with. At the root in phase 2 it just solves (nothing is hidden there).

The work per move is a number of iterations (`ITERATIONS`), never seconds: the same seed gives the same
card on any machine, and the budget keeps a move far inside the default one-second clock.
"""

from __future__ import annotations

import math
import random

from arena.sdk import sim

ITERATIONS = 2000
EXPLORE = 0.7  # UCB1's exploration constant, on rewards scaled to 0..1 (honours / 20)
EPSILON = 0.3  # share of random cards in the rollouts (as pimc's)


class Node:
    __slots__ = ("seat", "visits", "reward", "avail", "children")

    def __init__(self, seat: int) -> None:
        self.seat = seat  # who played the card that leads here (the reward is theirs)
        self.visits = 0
        self.reward = 0.0
        self.avail = 0
        self.children: dict[int, Node] = {}

    def ucb(self) -> float:
        return self.reward / self.visits + EXPLORE * math.sqrt(math.log(self.avail) / self.visits)


def _iterate(root: Node, world: sim.World, rng: random.Random) -> None:
    deal = world
    node = root
    path = [root]
    while not deal.done and deal.stock:
        legal = deal.legal_cards()
        untried = [c for c in legal if c not in node.children]
        for c in legal:
            child = node.children.get(c)
            if child is not None:
                child.avail += 1
        if untried:
            card = untried[rng.randrange(len(untried))]
            child = node.children[card] = Node(deal.to_move)
            child.avail = 1
            deal.play(card)
            path.append(child)
            break
        card = max(legal, key=lambda c: node.children[c].ucb())
        node = node.children[card]
        deal.play(card)
        path.append(node)
    # the rest of phase 1 by the quick policy, then phase 2 exactly (in the compiled core when built)
    first = sim.playout_value(deal, 0, rng.getrandbits(63), EPSILON)
    honours = (first, 20 - first)
    for n in path[1:]:
        n.visits += 1
        n.reward += honours[n.seat] / 20


def choose(k: sim.Knowledge, rng: random.Random, iterations: int | None = None) -> int:
    """The card to play for the seat of `k` (an engine int): the most visited one at the root.
    `iterations` defaults to ITERATIONS."""
    iterations = ITERATIONS if iterations is None else iterations
    first, forced = sim.settled(k, rng)  # one legal card, or phase 2 solved exactly
    if forced is not None:
        return forced
    legal = first.legal_cards()
    root = Node(1 - k.seat)
    for i in range(iterations):
        _iterate(root, first if i == 0 else sim.sample_world(k, rng), rng)
    return max(legal, key=lambda c: (root.children[c].visits, root.children[c].reward, -c))
