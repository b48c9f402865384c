"""Phase-1 estimates by perfect-information Monte Carlo from the mover's own view.

Before the stock is empty the mover does not know the opponent's hand or the stock, so no card has an
exact value. For each of N worlds drawn from the mover's knowledge (`worlds.sample_world`, which never
reads hidden cards), each legal card is played, the rest of phase 1 is played by one fixed cheap policy
for both sides (`rollout_card`), and phase 2 is then solved exactly. In the last trick of phase 1 no
policy is needed: the rest of the trick is searched, so each world's value is exact. A card's
estimate is its mean over the worlds, with the standard deviation as its spread. The same worlds serve
every card (common random numbers), so the differences between cards are steadier than the values."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from arena.analysis.solver import best_value
from arena.analysis.worlds import Knowledge, World, sample_world
from arena.engine.cards import HONOUR, cards_of
from arena.engine.tables import FOLLOWER_WINS


@dataclass(frozen=True, slots=True)
class Estimate:
    """Per legal card: mean end-of-deal honours for the mover's side, and their spread (std. dev.)."""

    mover: int
    values: dict[int, float]
    spread: dict[int, float]
    samples: int
    per_world: dict[int, tuple[int, ...]]  # each card's value in each world, the same worlds for all

    @property
    def best(self) -> tuple[int, ...]:
        top = max(self.values.values())
        return tuple(sorted(c for c, v in self.values.items() if v >= top - 1e-9))

    def lost(self, card: int) -> float:
        return max(self.values.values()) - self.values[card]

    def lost_stderr(self, card: int) -> float:
        """The standard error of `lost(card)`: of the per-world differences to the first best card."""
        if self.samples < 2:
            return 0.0
        top = self.per_world[self.best[0]]
        diffs = [t - v for t, v in zip(top, self.per_world[card], strict=True)]
        root: float = self.samples**0.5
        return statistics.stdev(diffs) / root


def rollout_card(w: World) -> int:
    """The phase-1 policy of the rollouts, for either side: cheap and deterministic.

    Following: take the trick with the cheapest card that wins it when the card led is an honour,
    else throw the cheapest non-honour (or the cheapest card). Leading: the lowest non-honour, else
    the lowest card.
    """
    hand = cards_of(w.legal_mask())
    lead = w.table
    if lead is None:
        plain = [c for c in hand if not HONOUR[c]]
        return min(plain or hand, key=lambda c: c & 7)
    wins = FOLLOWER_WINS[w.trump]
    if HONOUR[lead]:
        takers = [c for c in hand if wins[lead << 5 | c]]
        if takers:
            return min(takers, key=lambda c: (HONOUR[c], c & 7))
    return min(hand, key=lambda c: (HONOUR[c], c & 7))


def world_value(w: World, mover: int, core: str = "auto") -> int:
    """The mover's end-of-deal honours in one world: the rest of phase 1 by the rollout policy, then
    phase 2 solved. In the last trick of phase 1 the world's value is exact (`exact_value`)."""
    if len(w.stock) == 2:
        return exact_value(w, mover, core)
    while w.stock:  # a trick begun in phase 1 ends before the stock runs out
        w.play(rollout_card(w))
    return exact_value(w, mover, core)


def exact_value(w: World, mover: int, core: str = "auto") -> int:
    """The perfect-information value for the mover of a world in the last trick of phase 1 or later:
    the rest of that trick by search over both sides' cards (the draws are known in the world), then
    phase 2 by the solver."""
    if w.stock:
        values = []
        for card in w.legal_cards():
            x = w.copy()
            x.play(card)
            values.append(exact_value(x, mover, core))
        return max(values) if w.to_move == mover else min(values)
    if w.done:
        return w.honours[mover]
    pos = w.position()
    value = best_value(pos, core)
    return value if pos.to_move == mover else sum(w.honours) + pos.remaining - value


def estimate(
    know: Knowledge, legal: list[int], samples: int, rng: random.Random, core: str = "auto"
) -> Estimate:
    """PIMC over `samples` worlds for each card of `legal` (the mover is `know.seat`)."""
    mover = know.seat
    per_card: dict[int, list[int]] = {c: [] for c in legal}
    for _ in range(samples):
        world = sample_world(know, rng)
        for card in legal:
            w = world.copy()
            w.play(card)
            per_card[card].append(world_value(w, mover, core))
    return Estimate(
        mover=mover,
        values={c: statistics.fmean(v) for c, v in per_card.items()},
        spread={c: statistics.pstdev(v) for c, v in per_card.items()},
        samples=samples,
        per_world={c: tuple(v) for c, v in per_card.items()},
    )
