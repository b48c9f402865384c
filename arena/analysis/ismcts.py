"""Single-observer ISMCTS over phase 1 (Cowling, Powley and Whitehouse 2012): the search of the ismcts
sample bot, here so that it runs in the compiled core (`_ismcts.c`, about 4 us an iteration against
some 25 us for the tree walk in Python over compiled playouts) and reaches bots through `arena.sdk.sim.ismcts`.

One tree over the seat's information set: each iteration deals the unknown cards out anew (uniformly:
the opponent's hand, then the stock in random order, the turned trump last), walks the tree along
the cards that are legal in that world (UCB1 with availability counts, so a card is judged only against
the worlds where it could be played), adds one node, plays on to phase 2 by a noisy greedy playout
and solves phase 2 exactly (`playout.playout_value`), and backs up the honours each side ends with.

This module is also the pure-Python twin: the same SplitMix64 stream from one seed draws the worlds,
the new nodes and the playouts' seeds, so both give the same visits and rewards
(tests/analysis/test_ismcts.py).
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence

from arena.analysis import core
from arena.analysis.playout import SplitMix, eps32, playout_value
from arena.analysis.worlds import Knowledge, World
from arena.engine.cards import cards_of
from arena.engine.rng import MASK64

PEEKS = (None, "hand", "all")  # what the strength bench may let a search see; the index is the core's code


def _hidden(k: Knowledge, peek: str | None, order: Sequence[int]) -> tuple[list[int], int]:
    """The unknown cards as the search starts from them, and how many of them stay where they are."""
    if peek not in PEEKS:
        raise ValueError(f"peek must be one of {PEEKS}, not {peek!r}")
    if peek is None:
        return cards_of(k.unknown), 0
    if sorted(order) != cards_of(k.unknown):
        raise ValueError("peek needs `order`: every unknown card once, the opponent's hand first")
    return list(order), len(order) if peek == "all" else k.opponent_hand_size


class _Node:
    __slots__ = ("seat", "visits", "reward", "avail", "children")

    def __init__(self, seat: int) -> None:
        self.seat = seat  # who played the card that leads here (the reward is theirs)
        self.visits = 0
        self.reward = 0.0
        self.avail = 1
        self.children: dict[int, _Node] = {}


def _draw63(g: SplitMix) -> int:
    hi = g.next32()
    return (hi << 32 | g.next32()) >> 1


def _python(
    k: Knowledge, seed: int, iterations: int, explore: float, epsilon: float, depth: int, order: list[int],
    fixed: int,
) -> dict[int, tuple[int, float]]:  # fmt: skip
    g = SplitMix(seed)
    root = _Node(1 - k.seat)
    hidden = list(order)
    n = len(hidden)
    size = k.opponent_hand_size
    for _ in range(iterations):
        for i in range(n - 1, fixed, -1):
            j = fixed + g.below(i - fixed + 1)
            hidden[i], hidden[j] = hidden[j], hidden[i]
        stock = hidden[size:]
        if k.trump_card is not None:
            stock.append(k.trump_card)
        hands = [0, 0]
        hands[k.seat] = k.hand
        hands[1 - k.seat] = sum(1 << c for c in hidden[:size])
        w = World(hands, stock, k.leader, k.table, list(k.honours), k.trump_suit, k.must_head)
        node = root
        path: list[_Node] = []
        while w.stock and len(path) < depth:
            legal = cards_of(w.hands[w.to_move])
            untried = [c for c in legal if c not in node.children]
            for c in legal:
                if c in node.children:
                    node.children[c].avail += 1
            if untried:
                card = untried[g.below(len(untried))]
                child = node.children[card] = _Node(w.to_move)
                w.play(card)
                path.append(child)
                break
            best, top = -1, -1.0
            for c in legal:
                ch = node.children[c]
                v = ch.reward / ch.visits + explore * math.sqrt(math.log(ch.avail) / ch.visits)
                if v > top:
                    best, top = c, v
            node = node.children[best]
            w.play(best)
            path.append(node)
        first = playout_value(w, 0, _draw63(g), epsilon, "python")
        for p in path:
            p.visits += 1
            p.reward += (first if p.seat == 0 else 20 - first) / 20
    return {c: (ch.visits, ch.reward) for c, ch in root.children.items()}


def search(k: Knowledge, seed: int, iterations: int, explore: float, epsilon: float, depth: int = 32,
           which: str = "auto", peek: str | None = None, order: Sequence[int] = ()
           ) -> dict[int, tuple[int, float]]:  # fmt: skip
    """card -> (visits, the sum of its rewards: honours / 20 at the end of the deal) at the root, after
    `iterations` from a phase-1 position (the stock not empty) known as `k`; rewards are scaled to
    0..1 for UCB1's `explore`, the tree is at most `depth` cards deep, and the playouts play a random
    card with probability `epsilon`. `which` core: "auto", "c" or "python" (the same answer from each).

    `peek` is for the strength bench alone, which reads the true deal (`arena.sdk.sim.ismcts` has no
    such parameter, and no bot knows the hidden cards): with `order`, the unknown cards in their true
    places (the opponent's hand, then the stock top first, the turned trump left out), "hand" keeps the
    opponent's hand and deals only the stock anew, "all" keeps every card where it is."""
    if not k.stock_count:
        raise ValueError("ISMCTS searches phase 1: the stock is empty")
    hidden, fixed = _hidden(k, peek, order)
    if not core.use_c(which):
        return _python(k, seed, iterations, explore, epsilon, depth, hidden, fixed)
    visits = (ctypes.c_int32 * 32)()
    rewards = (ctypes.c_double * 32)()
    known = (ctypes.c_uint8 * 32)(*hidden)
    trump_card = -1 if k.trump_card is None else k.trump_card
    args = (k.hand, k.unknown, k.seat, k.opponent_hand_size, trump_card, k.leader, -1 if k.table is None else k.table,
            k.honours[0], k.honours[1], -1 if k.trump_suit is None else k.trump_suit, int(k.must_head), iterations,
            seed & MASK64, eps32(epsilon), explore, depth, known, PEEKS.index(peek), visits, rewards)  # fmt: skip
    if core.library().elf_ismcts(*args) != 0:
        raise MemoryError(f"ISMCTS: no memory for {iterations} nodes")
    return {c: (visits[c], rewards[c]) for c in range(32) if visits[c]}
