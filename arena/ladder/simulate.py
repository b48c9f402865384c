"""Simulated ladders with known true ratings: what the calibration tests and `arena bench ratings`
use to show that live Elo under matchmaking keeps the true spread.

Live Elo paired on itself stretches: a bot that is rated too high meets stronger bots, and with
its neighbours' ratings also noisy the errors feed each other (12 bots, 4,000 games each, under the
matchmaking's repeat cap, 12 seeds: 1.133 times the true spread on average, sd 0.078). Pairing on
the season fit, refitted as results arrive, cuts that loop (1.045, sd 0.055; docs/ladder.md).
"""

from __future__ import annotations

import random

import numpy as np

from arena.ladder.fit import fit_ratings
from arena.ladder.matchmaking import Candidate, Meetings, pick_pairing
from arena.ladder.ratings import INITIAL, PROVISIONAL_GAMES, elo_update, expected


def live_spread(
    bots: int = 16, games_per_bot: int = 4000, *, pair_on: str = "fit", sd: float = 200.0, seed: int = 0
) -> dict:
    """Play a matchmaking ladder of `bots` with true ratings ~ N(1500, sd) until each has played
    `games_per_bot` games; return the live ratings' spread against the true one, and the sum of
    live changes (zero-sum: the mean stays at INITIAL). `pair_on`: "fit" (as the ladder does) or
    "live" (the old way, for comparison)."""
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    true = np_rng.normal(INITIAL, sd, bots)
    live = [INITIAL] * bots
    rated = [0] * bots
    last = [-1] * bots
    fitted = list(live)
    met = Meetings()
    total = bots * games_per_bot // 2
    a_arr = np.zeros(total, dtype=np.int64)
    b_arr = np.zeros(total, dtype=np.int64)
    s_arr = np.zeros(total)
    refit = max(bots, 1) * 10  # games between fits: every 20 games per bot (each game is two bots')
    for k in range(total):
        if pair_on == "fit" and k and k % refit == 0:
            fit = fit_ratings(bots, a_arr[:k], b_arr[:k], s_arr[:k])
            fitted = [float(x) if x == x else live[i] for i, x in enumerate(fit.ratings)]
        basis = (
            [f if rated[i] >= PROVISIONAL_GAMES else live[i] for i, f in enumerate(fitted)]
            if pair_on == "fit"
            else live
        )
        cands = [Candidate(i, f"o{i}", basis[i], rated[i], last[i]) for i in range(bots)]
        pairing = pick_pairing(cands, rng, met=met)
        assert pairing is not None  # every bot has its own owner: any two may meet
        first, second = pairing
        a, b = first.entry_id, second.entry_id
        p = expected(true[a], true[b])
        score = 1.0 if rng.random() < p else 0.0
        ca, cb = elo_update(live[a], rated[a], live[b], rated[b], score)
        live[a], live[b] = ca.after, cb.after
        rated[a] += 1
        rated[b] += 1
        last[a] = last[b] = k
        met.add(a, b)
        a_arr[k], b_arr[k], s_arr[k] = a, b, score
    live_arr = np.array(live)
    return {
        "bots": bots,
        "games_per_bot": games_per_bot,
        "pair_on": pair_on,
        "true_sd": float(true.std()),
        "live_sd": float(live_arr.std()),
        "spread_ratio": float(live_arr.std() / true.std()),
        "mean_live": float(live_arr.mean()),
        "rmse": float(np.sqrt(np.mean((live_arr - live_arr.mean() - (true - true.mean())) ** 2))),
    }
