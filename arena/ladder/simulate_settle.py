"""A simulated `--until-stable` run: a field of bots with known true ratings, paired as the ladder
pairs (`pick_pairing` on the fit, live Elo while provisional), played until `arena.ladder.settle`
says the field is settled or the cap is reached. The test of the criterion and its defaults on
realistic fields (unbeatable and hopeless bots, a crowd of equals) uses it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from arena.ladder.fit import fit_ratings
from arena.ladder.matchmaking import Candidate, Meetings, pick_pairing
from arena.ladder.ratings import INITIAL, PROVISIONAL_GAMES, elo_update, expected
from arena.ladder.settle import STABLE_CI, Unsettled, unsettled

MAX_MATCHES = 2000  # `arena season run --max-matches`'s default


@dataclass(frozen=True)
class SettleRun:
    matches: int  # ladder matches played
    settled: bool  # False: stopped at the cap
    left: tuple[Unsettled, ...]  # who was still unsettled at the end
    ratings: tuple[float, ...]  # the final fit's


def settle_run(
    true: Sequence[float],
    *,
    anchors: Mapping[int, float] | None = None,
    stable_ci: float = STABLE_CI,
    max_matches: int = MAX_MATCHES,
    per_pairing: int = 2,
    seed: int = 0,
) -> SettleRun:
    """Play the field `true` (Elo) until settled; `per_pairing` games a pairing (2: a duplicate
    season's pair of matches, the demo's format), one point to the winner."""
    rng = random.Random(seed)
    n = len(true)
    live, rated, last = [INITIAL] * n, [0] * n, [-1] * n
    a: list[int] = []
    b: list[int] = []
    score: list[float] = []
    active = list(range(n))
    met = Meetings()
    fit = fit_ratings(n, a, b, score, anchors=anchors)
    while True:
        left = unsettled(fit, active, rated, stable_ci) if a else []
        if a and not left:
            return SettleRun(len(a), True, (), tuple(map(float, fit.ratings)))
        if len(a) + per_pairing > max_matches:
            return SettleRun(len(a), False, tuple(left), tuple(map(float, fit.ratings)))
        basis = [
            float(fit.ratings[i]) if rated[i] >= PROVISIONAL_GAMES and fit.rated[i] else live[i]
            for i in range(n)
        ]
        cands = [Candidate(i, f"o{i}", basis[i], rated[i], last[i]) for i in range(n)]
        pairing = pick_pairing(cands, rng, met=met)
        assert pairing is not None  # every bot has its own owner
        x, y = pairing[0].entry_id, pairing[1].entry_id
        for _ in range(per_pairing):
            s = 1.0 if rng.random() < expected(true[x], true[y]) else 0.0
            cx, cy = elo_update(live[x], rated[x], live[y], rated[y], s)
            live[x], live[y] = cx.after, cy.after
            rated[x] += 1
            rated[y] += 1
            a.append(x)
            b.append(y)
            score.append(s)
        last[x] = last[y] = len(a)
        met.add(x, y, per_pairing)
        fit = fit_ratings(n, np.array(a), np.array(b), np.array(score), anchors=anchors)
