"""The prior's pull on each rating, and the interval widening it calls for.

The season fit's prior (virtual draws against each bot's opponents) keeps every estimate finite, but
it also pulls each estimate towards the opponents it met. For most bots the pull is a small share
of the interval; for the strongest and weakest bots of a sparse ladder (few games each) or a wide
one (a large spread of strength) it is not, and their intervals, centred on the pulled estimate and
computed from the information there (higher, nearer its opponents), missed the truth far more than
5% of the time (the top and bottom 10% covered 81-90% in simulation, docs/ladder.md "Extreme bots").

To first order the pull is the prior's share of the score equation over the information: at the
fitted ratings the data's gradient and the virtual draws' cancel, so

    pull_i = |Σ_j vd_ij (½ − p_ij)| / d_i   (log-odds units; reported in Elo),

with vd_ij the pair's virtual draws and d_i the bot's information. Each shown interval is widened by
PULL_WIDENING times it: one pull for the estimate's shift, about one more for the information read
at the pulled rather than the true rating. The factor was measured, not derived
(`arena bench coverage`).
"""

from __future__ import annotations

import numpy as np

from arena.ladder.pairs import Pairs

PULL_WIDENING = 2.0  # widen the 95% half-width by this many times the prior's pull (measured)


def prior_pull(pairs: Pairs, ratings: np.ndarray, info: np.ndarray, prior: float) -> np.ndarray:
    """Each player's prior pull in Elo (0 where there is none: unrated players, no prior). One pass
    over the pairs; `ratings` in Elo (only differences within a group matter), `info` each player's
    information (log-odds units⁻²) as the fit computed it."""
    n = pairs.n
    if prior <= 0 or not len(pairs.u):
        return np.zeros(n)
    c = np.divide(0.5 * prior, pairs.player_games, out=np.zeros(n), where=pairs.player_games > 0)
    u, v = pairs.u, pairs.v
    virtual = pairs.games * (c[u] + c[v])
    r = np.nan_to_num(ratings)
    p = 1.0 / (1.0 + 10.0 ** ((r[v] - r[u]) / 400.0))
    share = virtual * (0.5 - p)
    grad = np.bincount(u, share, n) - np.bincount(v, share, n)
    out: np.ndarray = np.divide(np.abs(grad), info, out=np.zeros(n), where=info > 0)
    return out * (400.0 / np.log(10.0))
