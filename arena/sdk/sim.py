"""Simulation for search bots: worlds consistent with your view, played forward, and the exact solver.

    from arena.sdk import sim

    class Mine(Bot):
        def play(self, view):
            for world in sim.worlds(view, self.rules, 20, self.rng):
                line = sim.fork(world)                  # worlds are mutable: fork before playing
                line.play(sim.card(view.legal[0]))
                sim.play_forward(line)                  # both sides, to the start of phase 2
                honours = sim.final_honours(line, view.seat)   # exact from there on
                ...

A world is an `arena.analysis.worlds.World`: both hands, the stock in draw order and the trick in
progress, with the hidden cards (the opponent's hand, the stock order) dealt out uniformly among those
that fit what you saw: the cards played, your hand, the stock count and the turned trump. That sampler
is the arena's one implementation (`arena replay analyse` uses it too). Cards are engine ints here
(`card()` and `code()` convert); `view.legal` holds text codes.

The engine and the solver are bound into the sandbox next to the SDK, so this works there as it does
on your machine. Nothing here reads the clock: with the same generator the same worlds come out.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from arena.analysis.ismcts import search as _ismcts
from arena.analysis.playout import greedy
from arena.analysis.playout import playout_value as _playout_value
from arena.analysis.solver import solve as _solve
from arena.analysis.worlds import Knowledge, World, sample_world
from arena.engine.cards import card_code, parse_card
from arena.engine.rules import Rules
from arena.proto import referee_pb2 as pb
from arena.sdk.view import View

__all__ = [
    "Knowledge",
    "World",
    "card",
    "code",
    "final_honours",
    "fork",
    "greedy",
    "ismcts",
    "knowledge",
    "noisy",
    "play_forward",
    "playout_value",
    "rules_of",
    "sample_world",
    "settled",
    "solve",
    "worlds",
]

Policy = Callable[[World], int]


def card(text: str) -> int:
    """'TS' -> the engine's int for the card."""
    return parse_card(text)


def code(c: int) -> str:
    """The engine's int -> 'TS'."""
    return card_code(c)


def rules_of(rules: pb.Rules | Rules | None) -> Rules:
    """The engine's rules from the Welcome's `Rules` (the options that shape a deal; unset means default)."""
    if isinstance(rules, Rules):
        return rules
    if rules is None:
        return Rules()
    return Rules(
        scoring=rules.scoring or "tendler",
        hand_size=rules.hand_size or 6,
        trumps=rules.trumps,
        must_head_phase2=rules.must_head_phase2,
    )


def knowledge(view: View, rules: pb.Rules | Rules | None) -> Knowledge:
    """Your view as the sampler's `Knowledge` (what docs/rules.md §8 lets you see, as engine ints)."""
    played = 0
    for t in view.tricks:
        played |= 1 << parse_card(t.lead) | 1 << parse_card(t.follow)
    return Knowledge(
        seat=view.seat,
        hand=sum(1 << parse_card(c) for c in view.hand),
        played=played,
        table=parse_card(view.lead_card) if view.lead_card else None,
        leader=view.leader,
        stock_count=view.stock_size,
        opponent_hand_size=view.opponent_hand_size,
        honours=view.honours,
        trump_card=parse_card(view.trump_card) if view.trump_card else None,
        trump_suit="CDHS".index(view.trump_suit) if view.trump_suit else None,
        must_head=rules_of(rules).must_head_phase2,
    )


def worlds(view: View | Knowledge, rules: pb.Rules | Rules | None, n: int, rng: random.Random) -> list[World]:
    """`n` worlds consistent with your view, each at the current position (in phase 2 all the same)."""
    k = view if isinstance(view, Knowledge) else knowledge(view, rules)
    return [sample_world(k, rng) for _ in range(n)]


def fork(world: World) -> World:
    """An independent copy to play forward (the original is left as it is)."""
    return world.copy()


def solve(world: World) -> dict[int, int]:
    """Once the stock is empty: for each legal card, the honours the side to move ends the deal with
    under best play by both sides (the arena's exact solver, `arena.analysis.solver.solve`)."""
    return _solve(world.position())


def settled(k: Knowledge, rng: random.Random) -> tuple[World, int | None]:
    """A first world sampled for `k`, and the card when the choice needs no search: the only legal
    card, or the solver's best once the stock is empty (the world is then the real position; ties go
    to the lowest card). Search bots start here."""
    first = sample_world(k, rng)
    legal = first.legal_cards()
    if len(legal) == 1:
        return first, legal[0]
    if k.stock_count == 0:
        values = solve(first)
        return first, max(legal, key=lambda c: (values[c], -c))
    return first, None


def final_honours(world: World, seat: int) -> int:
    """`seat`'s honours at the end of the deal, both sides playing best from here (the stock is empty)."""
    if world.done:
        return world.honours[seat]
    best = max(solve(world).values())
    return best if world.to_move == seat else 20 - best


def noisy(policy: Policy, rng: random.Random, epsilon: float) -> Policy:
    """`policy`, except that with probability `epsilon` it plays a uniformly random legal card: playouts
    from the same world then spread over several lines instead of repeating one (deterministic given
    `rng`)."""

    def play(world: World) -> int:
        if rng.random() < epsilon:
            legal = world.legal_cards()
            return legal[rng.randrange(len(legal))]
        return policy(world)

    return play


def play_forward(world: World, policy: Policy = greedy, to_phase2: bool = True) -> World:
    """Play `world` on with `policy` for both sides: until the stock is empty and a trick is about to
    start (where `solve` takes over), or to the end of the deal. Returns the same world."""
    while not world.done and (not to_phase2 or world.stock or world.table is not None):
        world.play(policy(world))
    return world


def playout_value(world: World, seat: int, seed: int, epsilon: float = 0.3) -> int:
    """`seat`'s honours at the end of the deal when `world` (left as it is) is played on by `noisy(greedy)`
    cards for both sides to the start of phase 2, then solved exactly: one leaf of a search, in the
    compiled core when it is built (some 20x faster than `play_forward` + `final_honours`), else in pure
    Python, with the same cards either way. Its random numbers come from `seed` alone: give every card of
    one world the same seed and they are compared on the same luck."""
    return _playout_value(world, seat, seed, epsilon)


def ismcts(
    k: Knowledge, seed: int, iterations: int, explore: float = 0.7, epsilon: float = 0.3, depth: int = 32
) -> dict[int, tuple[int, float]]:
    """Single-observer ISMCTS from a phase-1 position known as `k`: card -> (visits, the sum of its
    rewards, honours / 20 at the end of the deal) at the root after `iterations`, each on a world dealt
    anew, its leaf a `playout_value` playout (`epsilon`: the share of random cards), UCB1 with
    `explore`, the tree at most `depth` cards deep (`arena.analysis.ismcts`). In the compiled core when
    it is built (some 4 us an iteration), else the pure-Python twin with the same answer; its random
    numbers come from `seed` alone."""
    return _ismcts(k, seed, iterations, explore, epsilon, depth)
