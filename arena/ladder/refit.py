"""The season fit brought up to date with a few new results without fitting it again: the
incremental refit of a large ladder (what the standings and the matchmaking do after new results:
arena/ladder/standings.py `season_fit`).

A full fit costs Newton's iterations over the whole pair list, each a pass for the information and a
few for its conjugate gradients, then the two-level covariance's passes (9M pairs at 10,000 bots /
10M results: seconds). A few new results barely move the answer, so `refit` starts with one Newton
step from the previous fit with what is already known: the gradient at the previous ratings is zero
but for the new results (their points against their expected points, virtual draws included), and
the previous fit's two-level covariance (`arena.ladder.intervals`, an approximate inverse of the
information) turns it into the step, in O(players · 128 + new pairs).

That step alone is an approximation (about 3% of each rating's move: 0.07–0.22 Elo after 1,000 new
results at 2,000 bots / 1M): the two-level inverse is a few percent off the exact one, the old
pairs' virtual draws are re-spread over the new game counts, and it is a linearisation. So it is
checked and corrected: the gradient at the stepped ratings over every pair (one compiled pass that
stores nothing per pair: `arena.ladder.newton.gradient`), turned into a correction by the same
covariance, until a correction moves no rating by REFIT_TOL (0.01 Elo); each cuts the error about
5x, and one or two do at 2,000 bots. The ratings are then the full fit's to about 1e-4 Elo
(docs/ladder.md, tests/ladder/test_refit.py, tests/ladder/test_refit_wired.py). The same pass gives
the information's diagonal, so the intervals narrow as games come; their coarse part is the last
build's until the games added since pass REFIT_SHARE of those it saw, when it is built again at the
new ratings, as the full fit builds it (no Newton iteration).

The full (warm-started) fit is made instead below REFIT_MIN_PAIRS pairs (where it is cheap), when
the corrections do not settle within CORRECTIONS, and whenever the step does not apply: anchors,
several groups or a small one (exact covariance), a player new to the fit, or a perfect or zero
score that appears or ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from arena.ladder.fit import ELO_PER_UNIT, PRIOR, Fit, fit_pairs
from arena.ladder.intervals import Coarse, coarse
from arena.ladder.newton import Graph, gradient, information, weights
from arena.ladder.pairs import Pairs

REFIT_SHARE = 0.02  # new games since the coarse covariance was built, as a share of those it saw, at
# most (intervals within 0.5% of the full fit's at 3%, measured); past it, it is built again
REFIT_MIN_PAIRS = 100_000  # below, the full warm fit is cheap enough (tens of ms) and exact
REFIT_TOL = 0.01  # Elo: the step is corrected until the last correction moves no rating by more
CORRECTIONS = 8  # corrections at most (one pass over the pairs each; each cuts the error 5x or more,
# measured), else the full fit


def refit(
    previous: Fit,
    pairs: Pairs,
    new: Pairs,
    *,
    anchors: Mapping[int, float] | None = None,
    prior: float = PRIOR,
    min_pairs: int | None = None,
) -> Fit:
    """The fit of `pairs` (the previous fit's results and `new`, both for the same players 0..n-1),
    by one step from `previous` when it applies, else by `fit_pairs(pairs, warm=previous.ratings)`.
    `new` holds only the results recorded since `previous` (what a tally adds)."""
    if len(pairs.u) < (REFIT_MIN_PAIRS if min_pairs is None else min_pairs) or not _applies(
        previous, pairs, new, anchors
    ):
        return fit_pairs(pairs, anchors=anchors, prior=prior, warm=previous.ratings)
    members, two = previous.two_level[0]
    n = pairs.n
    theta = np.nan_to_num((previous.ratings - previous.anchor) / ELO_PER_UNIT)  # unrated: no pair, 0
    # the new results' virtual draws, spread as fit_pairs spreads them (with the new game counts)
    c = np.divide(0.5 * max(prior, 0.0), pairs.player_games, out=np.zeros(n), where=pairs.player_games > 0)
    u, v, games = new.u, new.v, new.games
    w = games * (1.0 + c[u] + c[v])
    p = 1.0 / (1.0 + np.exp(theta[v] - theta[u]))
    expected = np.bincount(u, w * p, n) + np.bincount(v, w * (1.0 - p), n)
    virtual = games * (c[u] + c[v])
    grad = new.player_points + 0.5 * (np.bincount(u, virtual, n) + np.bincount(v, virtual, n)) - expected
    theta[members] += _centred(two.apply(grad[members]))  # the step: O(players · 128 + new pairs)
    # its check, and its correction while it is not yet exact: the gradient at the stepped ratings
    # (every pair, one pass storing nothing per pair), turned into a move by the same covariance
    for _ in range(CORRECTIONS + 1):
        grad, info = gradient(n, pairs.u, pairs.v, pairs.games, c, pairs.player_points, theta)
        move = _centred(two.apply(grad[members]))
        theta[members] += move
        if float(np.abs(move).max(initial=0.0)) * ELO_PER_UNIT < REFIT_TOL:
            break
    else:  # not settling: the full fit
        return fit_pairs(pairs, anchors=anchors, prior=prior, warm=previous.ratings)
    ratings = previous.ratings.copy()
    ratings[members] = theta[members] * ELO_PER_UNIT + previous.anchor
    ratings[members] += previous.anchor - ratings[members].mean()  # the mean anchor, exactly
    fitted = float(previous.games.sum()) / 2.0 - previous.refitted  # games at the last coarse build
    added = previous.refitted + float(games.sum())
    pair_key, pair_info = previous.pair_key, previous.pair_info
    if added <= REFIT_SHARE * fitted:  # the last full fit's coarse covariance, the diagonal of now
        now = Coarse(info[members], two.g, two.q, two.mc, two.lc_pinv)
    elif len(members) == n:  # stale: built again at these ratings, as the full fit builds it
        w, virtual, pair_key = weights(n, pairs.u, pairs.v, pairs.games, c)
        graph = Graph(n, pairs.u, pairs.v, w)
        pair_info, _, info = information(graph, pairs.player_points + 0.5 * virtual, theta)
        now, added = coarse(graph, pair_info, info, theta - theta.mean()), 0.0
    else:  # (a group of some of the players only: the full fit builds its graph)
        return fit_pairs(pairs, anchors=anchors, prior=prior, warm=previous.ratings)
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
        pair_key=pair_key,
        pair_info=pair_info,
        two_level={0: (members, now)},
        refitted=added,
    )


def _centred(x: np.ndarray) -> np.ndarray:
    return x - x.mean()


def _applies(previous: Fit, pairs: Pairs, new: Pairs, anchors: Mapping[int, float] | None) -> bool:
    """Whether one step from `previous` may stand for the full fit (see the module docstring)."""
    if anchors or len(previous.ratings) != pairs.n or new.n != pairs.n or previous.groups != 1:
        return False
    if 0 not in previous.two_level or previous.anchored[0]:
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
