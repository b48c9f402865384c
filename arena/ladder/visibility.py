"""When a match's seed, salt, decks and replay may be shown to spectators.

A match is revealed once it is done and no match that shares its decks is still queued or running:
the twin of a duplicate pair (same season and pair), or any match with the same seed. Until then its
replay would show the cards its twin is about to be dealt. Failed and deleted deck-mates do not hold
a reveal back: they will never be played. Every front end decides what is public with these helpers;
`unrevealed_ids` answers for a whole page in one query, and `sealed_clause` puts the same test into
a list's own query (`arena.ladder.queries`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import TypeVar

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    bindparam,
    exists,
    literal,
    or_,
    select,
    tuple_,
    union,
)
from sqlalchemy.orm import Session, aliased

from arena.store.decks import MATE, deck_mates
from arena.store.hints import likely
from arena.store.models import Match

OPEN = ("queued", "running")
CHUNK = 500  # values per IN list, well under every database's parameter limit
T = TypeVar("T")


def deck_mate_open(s: Session, m: Match) -> bool:
    """True while another match dealing the same cards (same seed, or same season and pair) is open."""
    return bool(s.scalar(select(exists().where(MATE.status.in_(OPEN), deck_mates(m)))))


def decks_replayed(s: Session, m: Match) -> bool:
    """True for a retry that kept the decks of an earlier attempt (a deck-mate was already done, so
    `arena.store.decks.redeal` could not draw new ones): spectators may have watched those cards, so
    its live stream shows only its status until it is revealed. Over-cautious for a retry that was
    re-dealt before its deck-mate finished; that only delays spectating."""
    if (m.attempts or 0) < 2 or m.status not in OPEN:  # once done, `revealed` decides
        return False
    return bool(s.scalar(select(exists().where(MATE.status == "done", deck_mates(m)))))


def revealed(s: Session, m: Match) -> bool:
    """True only when `m` is done and every match sharing its decks is done or failed (or gone)."""
    return m.status == "done" and not deck_mate_open(s, m)


def sealed_clause(match: type[Match] = Match) -> ColumnElement[bool]:
    """SQL, true for a row of `match` that is not revealed: not done, or a deck-mate (the same seed,
    or the same season and pair) still open. The one reveal test in SQL: a list query filters or
    marks its rows with it, and `unrevealed_ids` asks it of a whole page in one statement.

    Two correlated EXISTS, each answered by an index probe (`ix_matches_seed`,
    `ix_matches_season_pair`): the work grows with the page, never with the history."""
    mate = aliased(Match, name="open_mate")
    still_open = (mate.status.in_(OPEN), mate.id != match.id)
    by_seed = exists().where(mate.seed == match.seed, *still_open)
    by_pair = exists().where(mate.season_id == match.season_id, mate.pair == match.pair, *still_open)
    return or_(match.status != "done", by_seed, by_pair)


def sealed_done(s: Session, version_ids: Sequence[int]) -> list[int]:
    """The ids of the finished matches played by any of `version_ids` that are not revealed: those
    sharing a seed, or a season and pair, with an open match (the test of `sealed_clause`; an open
    match is never the finished one itself). How a bot's page finds its sealed results
    (`queries.bot_record`). One statement whatever the history, read from indexes alone (migration
    0016): each seat's matches from `ix_matches_version0`/`1`, which hold the test's columns, against
    the open matches' decks hashed once from the partial `ix_matches_open_decks`."""
    if not version_ids:
        return []
    return sorted(s.scalars(_sealed_done(), {"versions": list(version_ids)}))


@cache
def _sealed_done() -> CompoundSelect:
    """`sealed_done`'s statement, built once: one SELECT per seat (an OR of the seats would read the
    table through a bitmap of both indexes), UNION for a bot's matches against itself. The open
    statuses are inlined as in the partial index's WHERE, which a planner matches against the
    constants it sees only."""
    live = aliased(Match, name="live")
    is_open = live.status.in_([literal(x, literal_execute=True) for x in OPEN])
    open_seeds = select(live.seed).where(is_open)
    open_pairs = select(live.season_id, live.pair).where(is_open)
    versions: BindParameter[list[int]] = bindparam("versions", expanding=True)
    seats = [
        select(Match.id).where(
            column.in_(versions),
            likely(Match.status == "done"),  # most rows are done: SQLite's sampled statistics say otherwise
            or_(Match.seed.in_(open_seeds), tuple_(Match.season_id, Match.pair).in_(open_pairs)),
        )
        for column in (Match.version0_id, Match.version1_id)
    ]
    return union(*seats)


def unrevealed_ids(s: Session, matches: Iterable[Match]) -> set[int]:
    """The ids of those of `matches` that are not revealed (the same test as `revealed`, in bulk):
    one statement per CHUNK done matches, so one for any page."""
    matches = list(matches)
    hidden = {m.id for m in matches if m.status != "done"}
    done = sorted({m.id for m in matches if m.status == "done"})
    for chunk in _chunks(done):
        hidden |= set(s.scalars(select(Match.id).where(Match.id.in_(chunk), sealed_clause())))
    return hidden


def _chunks(values: Sequence[T]) -> Iterable[Sequence[T]]:
    for i in range(0, len(values), CHUNK):
        yield values[i : i + CHUNK]
