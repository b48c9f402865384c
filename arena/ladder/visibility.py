"""When a match's cards may be shown: only once it and every match sharing its decks are over.

The twins of a duplicate pair (same season, same `pair`) hold the same decks, so one twin's replay
shows the other's hidden cards while that one is still being played. The web asks `revealed()`
before it serves a seed, a salt, a result or a replay (docs/security.md).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.store.models import Match

FINAL = ("done", "failed")


def revealed(s: Session, m: Match) -> bool:
    """True when `m` is done and every match with its season and pair is done or failed."""
    return m.id not in unrevealed_ids(s, [m])


def unrevealed_ids(s: Session, matches: Iterable[Match]) -> set[int]:
    """The ids among `matches` that `revealed()` refuses, with one query for the whole batch."""
    matches = list(matches)
    out = {m.id for m in matches if m.status != "done"}
    keyed: dict[tuple[int | None, int], list[int]] = defaultdict(list)
    for m in matches:
        if m.id not in out and m.pair is not None:
            keyed[(m.season_id, m.pair)].append(m.id)
    if not keyed:
        return out
    pairs = {pair for _, pair in keyed}
    q = select(Match.season_id, Match.pair).where(Match.pair.in_(pairs), Match.status.not_in(FINAL))
    for season_id, pair in s.execute(q):
        out.update(keyed.get((season_id, pair), []))
    return out
