"""Sequential probability ratio test for `arena compare`, as fishtest runs it.

H0: the Elo difference is elo0, H1: it is elo1 (defaults 0 and 30, α = β = 0.05). Each observation is
one duplicate pair (pentanomial: the pair's score is 0, ¼, ½, ¾ or 1) or one single game
(trinomial: 0, ½, 1). The log-likelihood ratio uses the normal approximation of the generalised SPRT
(Van den Bergh): LLR ≈ N (s1 − s0)(2 s̄ − s0 − s1) / (2 σ²), with s̄ and σ² the sample mean and
variance of the observation scores and s0, s1 the expected scores under H0 and H1. Every bin gets
half a pseudo-count (a Jeffreys-style prior) so a one-sided start cannot stop the test after one or
two pairs; its weight fades as observations accumulate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from arena.ladder.ratings import Z95

PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
TRINOMIAL = (0.0, 0.5, 1.0)
PSEUDO_COUNT = 0.5


def score_of(elo: float) -> float:
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_of(score: float) -> float:
    """The Elo difference whose expected score is `score` (±inf at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


@dataclass(frozen=True)
class SprtState:
    llr: float
    lower: float
    upper: float
    verdict: str | None  # "H1" (A is better), "H0" (not better), or None: keep playing
    elo: float
    elo_low: float
    elo_high: float
    n: int


@dataclass
class Sprt:
    """Accumulates outcomes and says when to stop."""

    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    pairs: bool = True

    def __post_init__(self) -> None:
        self.support = PENTANOMIAL if self.pairs else TRINOMIAL
        self.counts = [0] * len(self.support)

    def add(self, score: float) -> None:
        """Add one observation: a pair's mean score (pentanomial) or a game's score (trinomial)."""
        index = min(range(len(self.support)), key=lambda i: abs(self.support[i] - score))
        if abs(self.support[index] - score) > 1e-9:
            raise ValueError(f"score {score} is not one of {self.support}")
        self.counts[index] += 1

    @property
    def n(self) -> int:
        return sum(self.counts)

    def state(self) -> SprtState:
        lower = math.log(self.beta / (1.0 - self.alpha))
        upper = math.log((1.0 - self.beta) / self.alpha)
        n = self.n
        if n == 0:
            return SprtState(0.0, lower, upper, None, 0.0, -math.inf, math.inf, 0)
        counts = [c + PSEUDO_COUNT for c in self.counts]
        total = sum(counts)
        mean = sum(c * x for c, x in zip(counts, self.support, strict=True)) / total
        var = sum(c * (x - mean) ** 2 for c, x in zip(counts, self.support, strict=True)) / total
        s0, s1 = score_of(self.elo0), score_of(self.elo1)
        llr = total * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * var)
        verdict = "H1" if llr >= upper else "H0" if llr <= lower else None
        half = Z95 * math.sqrt(var / total)
        return SprtState(
            llr, lower, upper, verdict, elo_of(mean), elo_of(mean - half), elo_of(mean + half), n
        )
