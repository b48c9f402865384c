"""Sequential probability ratio test for `arena compare`, as fishtest runs it.

H0: the Elo difference is elo0, H1: it is elo1 (defaults 0 and 30, α = β = 0.05). Each observation is
one duplicate pair (pentanomial: the pair's score is 0, ¼, ½, ¾ or 1) or one single game
(trinomial: 0, ½, 1).

- **The LLR is fishtest's** (the generalised SPRT on the empirical distribution): under each
  hypothesis, the distribution nearest the observed one (maximum likelihood) whose mean is that
  hypothesis's expected score; LLR = N · Σ p̂ log(p1/p0). Empty bins get a small regularising count
  (fishtest's 1e-3) so the maximum exists.
- **The verdict freezes** at the first crossing of a bound. Observations still arriving (pairs that
  were running) are counted and reported, but never change it.
- **The Elo estimate is corrected for the stopping rule.** Stopping at the first crossing biases the
  plain mean (a test stops early when it got lucky), and its plain interval covers too rarely. The
  estimate here is median-unbiased and the interval is the exact one under the same ordering
  (stagewise: by where and when the test stopped) for replays like the test: for a candidate Elo,
  the test is replayed by simulation, on normal observations with the observed spread around that
  Elo's expected score; the estimate is the Elo at which the observed outcome is the median, the
  95% interval where it is the 97.5% and 2.5% quantile. The replays approximate fishtest's LLR, so
  the coverage is near, not at, 95% (measured 91.5–98.5%: docs/ladder.md, tests/ladder/test_sprt.py).
- **Variance reduction.** For pairs, the per-game variance of the same games read as independent
  (trinomial) against the pentanomial variance of the pairs: the ratio says how many more pairs a
  test without pairing would have needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from arena.ladder.fit import Z95, score_of

PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
TRINOMIAL = (0.0, 0.5, 1.0)
REGULARISE = 1e-3  # fishtest's count for an empty bin
MIN_CORRECTED = 10  # observations before the verdict needed for the stopping-rule correction
PAIR_SD_GUESS = 0.3  # a pair's score sd assumed for the expected length before any data


def elo_of(score: float) -> float:
    """The Elo difference whose expected score is `score` (±inf at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def mle_with_mean(pdf: Sequence[float], support: Sequence[float], mean: float) -> list[float]:
    """The distribution on `support` of mean `mean` that maximises the likelihood of `pdf`'s data:
    p_i = pdf_i / (1 + λ (x_i − mean)), λ found by Newton's method on the mean condition (plain
    Python: five bins, called after every pair)."""
    d = [x - mean for x in support]
    lo, hi = -1.0 / max(max(d), 1e-12), -1.0 / min(min(d), -1e-12)  # keep every 1 + λ d_i > 0
    lam = 0.0
    for _ in range(100):
        f = fp = 0.0
        for p, di in zip(pdf, d, strict=True):
            q = p * di / (1.0 + lam * di)
            f += q
            fp -= q * di / (1.0 + lam * di)
        new = lam - f / fp
        if not lo < new < hi:  # Newton left the domain: halve the way to its edge instead
            new = 0.5 * (lam + (hi if new > lam else lo))
        if abs(new - lam) < 1e-13:
            lam = new
            break
        lam = new
    out = [p / (1.0 + lam * di) for p, di in zip(pdf, d, strict=True)]
    total = sum(out)
    return [p / total for p in out]


def llr(counts: Sequence[float], support: Sequence[float], s0: float, s1: float) -> float:
    """fishtest's generalised-SPRT log-likelihood ratio for the observed counts."""
    n = float(sum(counts))
    if n == 0:
        return 0.0
    reg = [c + REGULARISE for c in counts]
    total = sum(reg)
    pdf = [c / total for c in reg]
    p0, p1 = mle_with_mean(pdf, support, s0), mle_with_mean(pdf, support, s1)
    return n * sum(p * math.log(b / a) for p, a, b in zip(pdf, p0, p1, strict=True))


@dataclass(frozen=True)
class SprtState:
    llr: float
    lower: float
    upper: float
    verdict: str | None  # "H1" (A is better), "H0" (not better), or None: keep playing
    elo: float  # corrected for the stopping rule once a verdict is in (else the plain estimate)
    elo_low: float
    elo_high: float
    n: int
    decided_at: int | None = None  # observations when the verdict froze
    plain_elo: float = 0.0  # the uncorrected mean's Elo


@dataclass
class Sprt:
    """Accumulates outcomes and says when to stop."""

    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    pairs: bool = True
    max_n: int | None = None  # the test's length limit (recorded; the correction's replays stop at the stop)
    frozen: SprtState | None = field(default=None, init=False)
    game_counts: list[int] = field(default_factory=lambda: [0, 0, 0], init=False)
    sequence: list[int] = field(default_factory=list, init=False)  # bin of each observation, in order

    def __post_init__(self) -> None:
        self.support = PENTANOMIAL if self.pairs else TRINOMIAL
        self.counts = [0] * len(self.support)

    @property
    def bounds(self) -> tuple[float, float]:
        return math.log(self.beta / (1.0 - self.alpha)), math.log((1.0 - self.beta) / self.alpha)

    def add(self, score: float, games: tuple[float, float] | None = None) -> None:
        """Add one observation: a pair's mean score (pentanomial) or a game's score (trinomial).
        `games`: the pair's two game scores (for the variance-reduction figure)."""
        index = min(range(len(self.support)), key=lambda i: abs(self.support[i] - score))
        if abs(self.support[index] - score) > 1e-9:
            raise ValueError(f"score {score} is not one of {self.support}")
        self.counts[index] += 1
        self.sequence.append(index)
        for g in games or ():
            self.game_counts[TRINOMIAL.index(g)] += 1
        if self.frozen is None:
            now = self._live()
            if now.verdict is not None:
                self.frozen = now

    @property
    def n(self) -> int:
        return sum(self.counts)

    def _live(self) -> SprtState:
        lower, upper = self.bounds
        n = self.n
        if n == 0:
            return SprtState(0.0, lower, upper, None, 0.0, -math.inf, math.inf, 0)
        value = llr(self.counts, self.support, score_of(self.elo0), score_of(self.elo1))
        verdict = "H1" if value >= upper else "H0" if value <= lower else None
        mean, var = self._moments(self.counts)
        half = Z95 * math.sqrt(var / n)
        plain = elo_of(mean)
        return SprtState(
            value,
            lower,
            upper,
            verdict,
            plain,
            elo_of(mean - half),
            elo_of(mean + half),
            n,
            n if verdict else None,
            plain,
        )

    def _moments(self, counts: list[int]) -> tuple[float, float]:
        x = np.array(self.support)
        c = np.array(counts, float) + REGULARISE
        mean = float((c * x).sum() / c.sum())
        return mean, float((c * (x - mean) ** 2).sum() / c.sum())

    def state(self) -> SprtState:
        """The test now: the frozen verdict once one was reached (later observations are counted in
        `n` and the LLR, never in the verdict), else the running one."""
        now = self._live()
        if self.frozen is None:
            return now
        f = self.frozen
        return SprtState(
            now.llr,
            f.lower,
            f.upper,
            f.verdict,
            f.elo,
            f.elo_low,
            f.elo_high,
            now.n,
            f.decided_at,
            f.plain_elo,
        )

    def expected_pairs(self, sd: float = PAIR_SD_GUESS) -> dict[str, float]:
        """Wald's expected number of observations at elo0, at elo1, and at the midpoint (the longest),
        for an observation score sd of `sd`."""
        lower, upper = self.bounds
        s0, s1 = score_of(self.elo0), score_of(self.elo1)
        drift = (s1 - s0) ** 2 / (2.0 * sd * sd)  # mean LLR step at elo1 (minus it at elo0)
        return {
            "elo0": ((1 - self.alpha) * -lower + self.alpha * -upper) / drift,
            "elo1": ((1 - self.beta) * upper + self.beta * lower) / drift,
            "midpoint": -lower * upper / drift,
        }

    def variance_reduction(self) -> dict[str, float] | None:
        """Pentanomial variance of the pairs against the trinomial variance of their games read as
        independent: ratio < 1 means the pairing saved games; `pairs_saved` is how many more pairs an
        unpaired test would need for the same precision."""
        games = sum(self.game_counts)
        if not self.pairs or self.n < 2 or games < 4:
            return None
        _, penta = self._moments(self.counts)
        x = np.array(TRINOMIAL)
        c = np.array(self.game_counts, float)
        mean = float((c * x).sum() / c.sum())
        tri = float((c * (x - mean) ** 2).sum() / c.sum()) / 2.0  # a pair's mean of two independent games
        if tri <= 0:
            return None
        ratio = penta / tri
        return {"ratio": ratio, "pairs_saved": self.n * (1.0 / ratio - 1.0) if ratio > 0 else math.inf}

    @property
    def correctable(self) -> bool:
        """A decided test whose data can carry the replays: at least MIN_CORRECTED observations with
        some spread (a test won 4-0 has no variance to replay; its plain figures stand, marked)."""
        f = self.frozen
        if f is None or f.decided_at is None or f.decided_at < MIN_CORRECTED:
            return False
        seen = np.bincount(np.array(self.sequence[: f.decided_at]), minlength=len(self.support))
        return self._moments(seen.tolist())[1] >= 0.01

    def corrected(self, sims: int = 500, seed: int = 1) -> SprtState:
        """The frozen state with its Elo corrected for the stopping rule (see the module docstring);
        the plain state when no verdict froze."""
        if self.frozen is None or not self.correctable:
            return self.state()
        low, mid, high = corrected_elo(self, sims=sims, seed=seed)
        f = self.frozen
        now = self.state()
        return SprtState(
            now.llr, f.lower, f.upper, f.verdict, mid, low, high, now.n, f.decided_at, f.plain_elo
        )


def _order(verdict: np.ndarray, at: np.ndarray, mean: np.ndarray, limit: int) -> np.ndarray:
    """Stagewise ordering of outcomes: H0 early < H0 late < undecided by mean < H1 late < H1 early."""
    return np.where(verdict < 0, -3.0 + at / (limit + 1), np.where(verdict > 0, 3.0 - at / (limit + 1), mean))


def corrected_elo(sprt: Sprt, sims: int = 500, seed: int = 1) -> tuple[float, float, float]:
    """(2.5%, 50%, 97.5%) stopping-rule-corrected Elo for a decided test (see the module docstring).

    The replays draw each observation's score as normal with the observed per-observation sd around
    a candidate mean, from one fixed set of normal draws (common random numbers), so the chance of
    an outcome at or below the observed one falls monotonically with the mean and bisection finds
    each quantile exactly; the LLR in the replays is the normal approximation of fishtest's."""
    f = sprt.frozen
    assert f is not None and f.decided_at is not None
    decided = f.decided_at
    # Replays need not run past `decided`: whether a replay's outcome is at or below the observed one
    # is settled by then (below an H1 at `decided` is all but an earlier H1; below an H0 there, an H0
    # by then), so a longer replay only costs time.
    limit = decided
    x = np.array(sprt.support)
    seen = np.bincount(np.array(sprt.sequence[:decided]), minlength=len(x)).astype(float)
    _, var = sprt._moments(seen.astype(int).tolist())
    sd = math.sqrt(max(var, 1e-4))
    lower, upper = sprt.bounds
    s0, s1 = score_of(sprt.elo0), score_of(sprt.elo1)
    walk = np.cumsum(np.random.default_rng(seed).standard_normal((sims, limit)), axis=1)
    n = np.arange(1, limit + 1)
    observed = _order(
        np.array([1 if f.verdict == "H1" else -1]), np.array([decided]), np.array([0.0]), limit
    )[0]

    def below(mean: float) -> float:
        means = mean + sd * walk / n
        value = n * (s1 - s0) * (2 * means - s0 - s1) / (2 * var)
        value[:, :1] = 0.0
        hit = (value >= upper) | (value <= lower)
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), limit - 1)
        rows = np.arange(sims)
        verdict = np.where(hit[rows, first], np.sign(value[rows, first]), 0)
        return float((_order(verdict, first + 1, means[rows, first], limit) <= observed).mean())

    def solve(q: float) -> float:
        lo, hi = 0.02, 0.98  # expected scores, about ±680 Elo
        for _ in range(16):
            m = 0.5 * (lo + hi)
            if below(m) > q:  # the observed outcome is a high one for m: the true score is higher
                lo = m
            else:
                hi = m
        return elo_of(0.5 * (lo + hi))

    return solve(0.975), solve(0.5), solve(0.025)
