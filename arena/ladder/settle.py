"""When a season is settled: the criterion `arena season run --until-stable` plays to.

A bot is settled once it has its PROVISIONAL_GAMES rated matches, its group is the season's main
one (bots that never met, directly or through others, cannot be compared: the smaller groups are
unsettled until they meet it), and one of these holds:

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

STABLE_CI = 100.0  # Elo: the default target for a neighbour gap or an interval (`--stable-ci`)
SEPARATED = 0.975  # LOS beyond which two neighbours' order is settled (two-sided 95%)


@dataclass(frozen=True)
class Unsettled:
    index: int  # the bot's index in the fit
    why: str  # short: the progress line shows it
    games_left: int  # estimated games this bot still needs


def unsettled(fit: Fit, active: Sequence[int], rated: Sequence[int], target: float) -> list[Unsettled]:
    """The active bots (indices into `fit`) that are not settled, and why; `rated[k]` is the rated
    matches of `active[k]`. Empty: the season is settled. Every neighbour pair's LOS and difference
    are computed in one call each (a large ladder checks thousands of pairs)."""
    games = dict(zip(active, rated, strict=True))
    width = _neighbour_widths(fit, active)  # bot -> the widest difference it is not separated by
    apart = _apart(fit, active)
    out = []
    for i in active:
        if not fit.rated[i]:
            out.append(Unsettled(i, "unrated", PROVISIONAL_GAMES))
        elif i in apart:
            out.append(Unsettled(i, apart[i], 1))
        elif games[i] < PROVISIONAL_GAMES:
            left = PROVISIONAL_GAMES - games[i]
            out.append(Unsettled(i, f"provisional {games[i]}/{PROVISIONAL_GAMES}", left))
        elif fit.is_anchor(i) or (not fit.bound[i] and fit.ci95[i] <= target) or width.get(i, 0.0) <= target:
            continue
        elif fit.bound[i]:
            what = "perfect score" if fit.bound[i] > 0 else "zero score"
            out.append(Unsettled(i, f"{what}, not clear", max(1, games[i] // 10)))
        elif not math.isfinite(width[i]):
            out.append(Unsettled(i, "by a bound, not clear", max(1, games[i] // 10)))
        else:
            worst = width[i]
            out.append(Unsettled(i, f"±{worst:.0f}>±{target:g}", _games_to_target(games[i], worst, target)))
    return out


def matches_left(left: Sequence[Unsettled]) -> int:
    """Ladder matches still to play, estimated: every match gives two bots a game, and one bot's
    games come one match at a time."""
    if not left:
        return 0
    per_bot = [u.games_left for u in left]
    return max(math.ceil(sum(per_bot) / 2), max(per_bot))


def _apart(fit: Fit, active: Sequence[int]) -> dict[int, str]:
    """The bots of the groups that never met the main one (the anchored group, else the largest):
    their ratings cannot be compared with it, so the season is not settled until they meet."""
    groups: dict[int, list[int]] = {}
    for i in active:
        if fit.rated[i]:
            groups.setdefault(int(fit.group[i]), []).append(i)
    if len(groups) < 2:
        return {}
    main = max(groups, key=lambda g: (bool(fit.anchored[g]), len(groups[g]), -g))
    why = f"never met the others ({len(groups)} groups)"
    return {i: why for g, members in groups.items() if g != main for i in members}


def _neighbour_widths(fit: Fit, active: Sequence[int]) -> dict[int, float]:
    """For each rated active bot, the widest 95% half-width of its difference from a neighbour (the
    next below and above it in its group's fitted order) it is not separated from: 0 when it is
    separated from both, inf when that neighbour, or the bot, has only a bound."""
    lo_list: list[int] = []
    hi_list: list[int] = []
    for g in {int(fit.group[i]) for i in active if fit.rated[i]}:
        members = sorted((i for i in active if fit.group[i] == g), key=lambda i: (fit.ratings[i], i))
        lo_list += members[:-1]
        hi_list += members[1:]
    out = {i: 0.0 for i in active if fit.rated[i]}
    if not lo_list:
        return out
    lo, hi = np.array(lo_list, dtype=np.int64), np.array(hi_list, dtype=np.int64)
    los = fit.los_pairs(hi, lo)
    half = Z95 * np.sqrt(np.maximum(fit.diff_var_pairs(hi, lo), 0.0))
    for k, (a, b) in enumerate(zip(lo_list, hi_list, strict=True)):
        if _separated(fit, a, b, float(los[k])):
            continue
        w = math.inf if fit.bound[a] or fit.bound[b] else float(half[k])
        out[a], out[b] = max(out[a], w), max(out[b], w)
    return out


def _separated(fit: Fit, lo: int, hi: int, los: float) -> bool:
    """Whether neighbours lo < hi (in fitted rating) are in a settled order at 95%: LOS(hi > lo),
    or for a perfect or zero score its bound against the other's interval or bound."""
    b_lo, b_hi = int(fit.bound[lo]), int(fit.bound[hi])
    if not b_lo and not b_hi:
        return los >= SEPARATED
    if b_lo > 0 or b_hi < 0:  # two perfect or two zero scores, or a bound on the wrong side
        return False
    upper_of_lo = fit.bound_elo[lo] if b_lo < 0 else fit.ratings[lo] + _ci(fit, lo)
    lower_of_hi = fit.bound_elo[hi] if b_hi > 0 else fit.ratings[hi] - _ci(fit, hi)
    return bool(lower_of_hi > upper_of_lo)


def _ci(fit: Fit, i: int) -> float:
    return 0.0 if fit.is_anchor(i) else float(fit.ci95[i])


def _games_to_target(games: int, width: float, target: float) -> int:
    """Games until a width of `width` is at the target, at 1/√games."""
    if not math.isfinite(width) or target <= 0:
        return max(1, games // 10)
    return max(1, math.ceil(games * ((width / target) ** 2 - 1)))
