"""The season fit brought up to date with a few new results without a pass over every pair: the
incremental refit of a large ladder.

A full fit costs passes over the whole pair list (9M pairs at 10,000 bots / 10M results: seconds).
A handful of new results barely moves the answer, so `refit` takes one Newton step from the previous
fit with what is already known: the gradient at the previous ratings is zero but for the new results
(their points against their expected points, virtual draws included), and the previous fit's
two-level covariance (`arena.ladder.intervals`, an approximate inverse of the information) turns it
into the step, in O(players · 128 + new pairs). The information's diagonal gains the new games, so
the intervals narrow as they should; the coarse part of the covariance is kept as it was.

What the step leaves out, and so why the full fit comes back: the two-level inverse is a few percent
off the exact one on what it does not hold exactly, the old pairs' virtual draws are not re-spread
over the new game counts (the prior's share moves by 1/games² a game), one step is a linearisation,
and the information's off-diagonal weights are the previous fit's. Measured against the full fit
(docs/ladder.md, tests/ladder/test_refit.py): about 3% of each rating's move, 0.07–0.22 Elo after 1,000
new results at 2,000 bots / 1M, 0.13 after five such refits. So that the drift cannot build up,
`refit` falls back to the full (warm-started) fit once the games added since the last full one pass
REFIT_SHARE of those fitted, below REFIT_MIN_PAIRS pairs (where that fit is cheap), and whenever the
step does not apply: anchors, several groups or a small one (exact covariance), a player new to the
fit, or a perfect or zero score that appears or ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from arena.ladder.fit import ELO_PER_UNIT, PRIOR, Fit, fit_pairs
from arena.ladder.intervals import Coarse
from arena.ladder.pairs import Pairs

REFIT_SHARE = 0.005  # new games since the last full fit, as a share of those fitted, at most
REFIT_MIN_PAIRS = 100_000  # below, the full warm fit is cheap enough (tens of ms) and exact


def refit(
    previous: Fit,
    pairs: Pairs,
    new: Pairs,
    *,
    anchors: Mapping[int, float] | None = None,
    prior: float = PRIOR,
    min_pairs: int = REFIT_MIN_PAIRS,
) -> Fit:
    """The fit of `pairs` (the previous fit's results and `new`, both for the same players 0..n-1),
    by one step from `previous` when it applies, else by `fit_pairs(pairs, warm=previous.ratings)`.
    `new` holds only the results recorded since `previous` (what a tally adds)."""
    if len(pairs.u) < min_pairs or not _applies(previous, pairs, new, anchors):
        return fit_pairs(pairs, anchors=anchors, prior=prior, warm=previous.ratings)
    members, two = previous.two_level[0]
    n = pairs.n
    theta = (previous.ratings - previous.anchor) / ELO_PER_UNIT
    # the new results' virtual draws, spread as fit_pairs spreads them (with the new game counts)
    c = np.divide(0.5 * max(prior, 0.0), pairs.player_games, out=np.zeros(n), where=pairs.player_games > 0)
    u, v, games = new.u, new.v, new.games
    w = games * (1.0 + c[u] + c[v])
    p = 1.0 / (1.0 + np.exp(theta[v] - theta[u]))
    expected = np.bincount(u, w * p, n) + np.bincount(v, w * (1.0 - p), n)
    virtual = games * (c[u] + c[v])
    grad = new.player_points + 0.5 * (np.bincount(u, virtual, n) + np.bincount(v, virtual, n)) - expected
    step = two.apply(grad[members])
    step -= step.mean()
    ratings = previous.ratings.copy()
    ratings[members] += step * ELO_PER_UNIT
    ratings[members] += previous.anchor - ratings[members].mean()  # the mean anchor, exactly
    h = w * p * (1.0 - p)
    info = previous.info + np.bincount(u, h, n) + np.bincount(v, h, n)
    now = Coarse(info[members], two.g, two.q, two.mc, two.lc_pinv)
    var = previous.var.copy()
    var[members] = now.variances() * ELO_PER_UNIT**2
    if not (np.isfinite(var[members]).all() and (var[members] > 0).all()):
        return fit_pairs(pairs, anchors=anchors, prior=prior, warm=previous.ratings)
    return replace(
        previous,
        ratings=ratings,
        var=var,
        games=pairs.player_games,
        points=pairs.player_points,
        iterations=0,
        info=info,
        two_level={0: (members, now)},
        refitted=previous.refitted + float(games.sum()),
    )


def _applies(previous: Fit, pairs: Pairs, new: Pairs, anchors: Mapping[int, float] | None) -> bool:
    """Whether one step from `previous` may stand for the full fit (see the module docstring)."""
    if anchors or len(previous.ratings) != pairs.n or new.n != pairs.n or previous.groups != 1:
        return False
    if 0 not in previous.two_level or previous.anchored[0]:
        return False
    fitted = float(previous.games.sum()) / 2.0 - previous.refitted  # games at the last full fit
    added = previous.refitted + float(new.games.sum())
    if added > REFIT_SHARE * fitted:
        return False
    rated = previous.group >= 0
    touched = np.zeros(pairs.n, dtype=bool)
    touched[new.u] = True
    touched[new.v] = True
    if (touched & ~rated).any():  # a player new to the fit: groups and the coarse space change
        return False
    games, points = pairs.player_games, pairs.player_points
    bound = np.where(games > 0, np.where(points >= games, 1, np.where(points <= 0, -1, 0)), 0)
    return bool(np.array_equal(bound.astype(np.int8), previous.bound))
