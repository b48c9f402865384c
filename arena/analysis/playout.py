"""Noisy greedy playouts from a world to the start of phase 2, then phase 2 solved exactly: the leaf
value of the search bots (`arena.sdk.sim.playout_value`).

The compiled core (`_playout.c`) plays them when it is built, else this module's pure-Python twin;
both draw the same 32-bit random numbers (SplitMix64, as the core's `Rng`) and play the same cards, so
a bot plays the same card with or without the core (tests/analysis/test_playout_core.py). The random numbers
come from a seed per playout, not from a shared generator: the same seed for every card of one world
compares the cards on the same luck (common random numbers).
"""

from __future__ import annotations

import ctypes

from arena.analysis import core
from arena.analysis.solver import solve
from arena.analysis.worlds import World
from arena.engine.cards import HONOUR, cards_of
from arena.engine.rng import MASK64, SplitMix64
from arena.engine.tables import FOLLOWER_WINS


def greedy(world: World) -> int:
    """A quick card for the side to move, for playing worlds forward (it sees both hands, as a world
    does). The leader cashes an honour the other hand cannot beat, else leads its cheapest card. The
    follower takes a led honour with its cheapest winning card; on a blank lead it cashes an honour that
    the other hand could take later, else throws its cheapest blank, and wins rather than give an honour
    away. Cheapest: blanks before honours, other suits before trumps, low before high. Deterministic and
    legal in every phase and variant."""
    trump = world.trump
    wins = FOLLOWER_WINS[trump]
    other = cards_of(world.hands[1 - world.to_move])

    def cost(c: int) -> tuple[int, bool, int]:
        return HONOUR[c], c >> 3 == trump, c & 7

    def beaten(c: int) -> bool:
        return any(wins[c << 5 | f] for f in other)

    legal = world.legal_cards()
    lead = world.table
    if lead is None:
        sure = [c for c in legal if HONOUR[c] and not beaten(c)]
        return min(sure or legal, key=cost)
    winners = [c for c in legal if wins[lead << 5 | c]]
    if winners and HONOUR[lead]:
        return min(winners, key=cost)
    exposed = [c for c in winners if HONOUR[c] and beaten(c)]
    if exposed:
        return min(exposed, key=cost)
    blanks = [c for c in legal if not HONOUR[c] and not wins[lead << 5 | c]]
    return min(blanks or winners or legal, key=cost)


class SplitMix(SplitMix64):
    """The engine's SplitMix64 with the C core's draw: `below` by multiply-shift, as the core does (cheap;
    its bias is below 2**-27 for a hand's few cards), so that both cores play the same cards."""

    __slots__ = ()

    def below(self, n: int) -> int:
        return (self.next32() * n) >> 32


def eps32(epsilon: float) -> int:
    """The share of random cards as the 32-bit threshold both cores compare against."""
    return max(0, min((1 << 32) - 1, round(epsilon * (1 << 32))))


def _python(world: World, seat: int, seed: int, threshold: int) -> int:
    line = world.copy()
    rng = SplitMix(seed)
    while not line.done and (line.stock or line.table is not None):
        legal = line.legal_cards()
        if rng.next32() < threshold:
            line.play(legal[rng.below(len(legal))])
        else:
            line.play(greedy(line))
    if line.done:
        return line.honours[seat]
    best = max(solve(line.position(), "python").values())
    return best if line.to_move == seat else 20 - best


def playout_value(world: World, seat: int, seed: int, epsilon: float, which: str = "auto") -> int:
    """`seat`'s honours at the end of the deal: `world` (left as it is) played on by noisy greedy cards
    for both sides (a random legal card with probability `epsilon`) to the start of phase 2, then best
    play by both. `which` core: "auto", "c" or "python" (as the solver's)."""
    threshold = eps32(epsilon)
    if not core.use_c(which):
        return _python(world, seat, seed, threshold)
    stock = (ctypes.c_uint8 * 32)(*world.stock)
    table = -1 if world.table is None else world.table
    trump = -1 if world.trump is None else world.trump
    lib = core.library()
    args = (world.hands[0], world.hands[1], stock, len(world.stock), world.leader, table, world.honours[0],
            world.honours[1], trump, int(world.must_head), seed & MASK64, threshold, seat)  # fmt: skip
    return int(lib.elf_greedy_playout(*args))
