"""Likelihood of superiority from a season fit, only for what is asked (issue #30): each standings
row's LOS over the next row of its group, and a table of at most LOS_MAX bots (the top ones, those
ranked around one, or named ones); never the whole ladder's n×n table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from arena.ladder.fit import Fit
    from arena.ladder.standings import Standing

LOS_MAX = 32  # bots in one LOS table: a table is LOS_MAX² figures, never the whole ladder's n²


class LosError(ValueError):
    """A LOS table asked of a bot the standings do not rate."""


class LosTooLarge(LosError):
    """A LOS table asked of more bots than LOS_MAX."""


@dataclass(frozen=True)
class LosAsk:
    """Which likelihood-of-superiority table a caller wants (nothing by default): the `top` rated bots,
    the bots ranked around one bot (`around`: it and up to two on either side in its group), or
    the named `bots` (a pair, or a few). At most LOS_MAX bots in all."""

    top: int = 0
    around: str = ""
    bots: tuple[str, ...] = ()


def los_next(rows: list[Standing], order: list[int], fit: Fit) -> list[float | None]:
    """Each row's LOS over the next rated row of its group (None: the last of its group, unrated, or
    not comparable): the neighbours' table a standings page shows, n figures, not n²."""
    rated = [k for k, r in enumerate(rows) if r.rated]
    out: list[float | None] = [None] * len(rows)
    pairs = [(k, nxt) for k, nxt in zip(rated, rated[1:], strict=False) if rows[k].group == rows[nxt].group]
    if pairs:
        values = fit.los_pairs([order[k] for k, _ in pairs], [order[n] for _, n in pairs])
        for (k, _), x in zip(pairs, values, strict=True):
            out[k] = None if x != x else round(float(x), 4)
    return out


def los_among(rows: list[Standing], order: list[int], fit: Fit, ask: LosAsk) -> tuple[list[str], np.ndarray]:
    """The LOS table `ask` names: labels in rank order, and LOS[i][j] that bot i is stronger than j
    (NaN: groups that never met). LosError if it would hold more than LOS_MAX bots or names a bot
    the standings do not rate."""
    rated = [(r, i) for r, i in zip(rows, order, strict=True) if r.rated]
    position = {r.bot: k for k, (r, _) in enumerate(rated)}
    wanted: set[int] = set()
    if ask.top:
        if ask.top > LOS_MAX:
            raise LosTooLarge(
                f"a LOS table of the top {ask.top} bots is over the limit of {LOS_MAX}; ask for fewer"
            )
        wanted |= set(range(min(ask.top, len(rated))))
    if any(not label for label in ask.bots):
        raise LosError("los_bots: an empty name; give each bot as name@version, as the table shows it")
    for label in (ask.around, *ask.bots):
        if label and label not in position:
            raise LosError(f"no rated bot {label!r} in these standings (name@version, as the table shows it)")
    if ask.around:
        k = position[ask.around]
        group = rated[k][0].group
        wanted |= {j for j in range(max(0, k - 2), min(len(rated), k + 3)) if rated[j][0].group == group}
    wanted |= {position[label] for label in ask.bots}
    if len(wanted) > LOS_MAX:
        raise LosTooLarge(f"a LOS table of {len(wanted)} bots is over the limit of {LOS_MAX}; ask for fewer")
    picked = sorted(wanted)
    idx = np.array([rated[k][1] for k in picked], dtype=np.int64)
    m = len(idx)
    table = fit.los_pairs(np.repeat(idx, m), np.tile(idx, m)).reshape(m, m)
    return [rated[k][0].bot for k in picked], table
