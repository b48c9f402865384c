"""When a season is settled: the criterion `arena season run --until-stable` plays to.

A bot is settled once it has its PROVISIONAL_GAMES rated matches and one of these holds:

- its 95% interval is at most the target (`--stable-ci`), or it is an anchor (fixed by definition);
- it is separated from both of its neighbours in the fitted order (the next bot above and below it
  that can be compared with it): the 95% interval of each difference excludes zero (LOS ≥ 97.5%),
  or, for a perfect or zero score (only a one-sided bound, no interval), the bound clears the
  neighbour's interval (a perfect score's lower bound above the neighbour's upper end, a zero
  score's upper bound below the neighbour's lower end).

So a bot whose place in the order is known is settled however wide its interval, and a perfect or
zero score that already clears its neighbours is settled; bots of equal strength, which no number
of matches separates, are settled by the target. The season is settled when every active bot is.

`matches_left` estimates how many more ladder matches that takes (the progress bar's target and
ETA): each unsettled bot's games to its provisional count, or to the target at 1/√games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from arena.ladder.fit import Z95, Fit
from arena.ladder.ratings import PROVISIONAL_GAMES

SEPARATED = 0.975  # LOS beyond which two neighbours' order is settled (two-sided 95%)


@dataclass(frozen=True)
class Unsettled:
    index: int  # the bot's index in the fit
    why: str  # short: the progress line shows it
    games_left: int  # estimated games this bot still needs


def unsettled(fit: Fit, active: Sequence[int], rated: Sequence[int], target: float) -> list[Unsettled]:
    """The active bots (indices into `fit`) that are not settled, and why; `rated[k]` is the rated
    matches of `active[k]`. Empty: the season is settled."""
    games = dict(zip(active, rated, strict=True))
    order = _order(fit, active)
    out = []
    for i in active:
        if not fit.rated[i]:
            out.append(Unsettled(i, "unrated", PROVISIONAL_GAMES))
            continue
        if games[i] < PROVISIONAL_GAMES:
            out.append(
                Unsettled(i, f"provisional {games[i]}/{PROVISIONAL_GAMES}", PROVISIONAL_GAMES - games[i])
            )
            continue
        if fit.is_anchor(i) or (not fit.bound[i] and fit.ci95[i] <= target):
            continue
        close = [j for j in order.get(i, ()) if not _separated(fit, i, j)]
        if fit.bound[i]:
            if close:
                what = "perfect score" if fit.bound[i] > 0 else "zero score"
                out.append(Unsettled(i, f"{what}, not clear", max(1, games[i] // 10)))
            continue
        # neither separated nor a bound: their difference known within the target is a tie
        widths = [_diff_ci(fit, i, j) for j in close]
        worst = max(widths, default=0.0)
        if worst > target:
            out.append(Unsettled(i, f"±{worst:.0f}>±{target:g}", _games_to_target(games[i], worst, target)))
    return out


def matches_left(left: Sequence[Unsettled]) -> int:
    """Ladder matches still to play, estimated: every match gives two bots a game, and one bot's
    games come one match at a time."""
    if not left:
        return 0
    per_bot = [u.games_left for u in left]
    return max(math.ceil(sum(per_bot) / 2), max(per_bot))


def _order(fit: Fit, active: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """Each rated active bot's neighbours: the next below and above it in its group's fitted order."""
    out: dict[int, tuple[int, ...]] = {}
    for g in {int(fit.group[i]) for i in active if fit.rated[i]}:
        members = sorted((i for i in active if fit.group[i] == g), key=lambda i: (fit.ratings[i], i))
        for k, i in enumerate(members):
            out[i] = tuple(members[max(k - 1, 0) : k]) + tuple(members[k + 1 : k + 2])
    return out


def _separated(fit: Fit, i: int, j: int) -> bool:
    """Whether i's and j's order is settled at 95%."""
    lo, hi = (i, j) if fit.ratings[i] < fit.ratings[j] else (j, i)
    b_lo, b_hi = int(fit.bound[lo]), int(fit.bound[hi])
    if not b_lo and not b_hi:
        los = float(fit.los_pairs([hi], [lo])[0])
        return los >= SEPARATED
    if b_hi > 0 and b_lo > 0 or b_hi < 0 and b_lo < 0:
        return False  # two perfect (or two zero) scores: nothing orders them
    if b_lo > 0 or b_hi < 0:  # a bound on the wrong side says nothing about this order
        return False
    upper_of_lo = fit.bound_elo[lo] if b_lo < 0 else fit.ratings[lo] + _ci(fit, lo)
    lower_of_hi = fit.bound_elo[hi] if b_hi > 0 else fit.ratings[hi] - _ci(fit, hi)
    return bool(lower_of_hi > upper_of_lo)


def _ci(fit: Fit, i: int) -> float:
    return 0.0 if fit.is_anchor(i) else float(fit.ci95[i])


def _diff_ci(fit: Fit, i: int, j: int) -> float:
    """Half-width of the 95% interval of i's rating minus j's (inf when j has only a bound)."""
    if fit.bound[j]:
        return math.inf
    var = float(fit.diff_var_pairs(np.array([i]), np.array([j]))[0])
    return Z95 * math.sqrt(var) if var > 0 else 0.0


def _games_to_target(games: int, width: float, target: float) -> int:
    """Games until a width of `width` is at the target, at 1/√games."""
    if not math.isfinite(width) or target <= 0:
        return max(1, games // 10)
    return max(1, math.ceil(games * ((width / target) ** 2 - 1)))
