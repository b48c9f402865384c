"""When a match's seed, salt, decks and replay may be shown to spectators.

A match is revealed once it is done and no match that shares its decks is still queued or running:
the twin of a duplicate pair (same season and pair), or any match with the same seed. Until then its
replay would show the cards its twin is about to be dealt. Failed and deleted deck-mates do not hold
a reveal back: they will never be played. The web decides what is public with these two helpers;
`unrevealed_ids` answers for a whole list in at most a few queries, for list pages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from sqlalchemy import exists, select, tuple_
from sqlalchemy.orm import Session

from arena.store.decks import MATE, deck_mates
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


def unrevealed_ids(s: Session, matches: Iterable[Match]) -> set[int]:
    """The ids of those of `matches` that are not revealed (the same test as `revealed`, in bulk)."""
    matches = list(matches)
    hidden = {m.id for m in matches if m.status != "done"}
    done = [m for m in matches if m.status == "done"]
    if not done:
        return hidden
    seeds = sorted({m.seed for m in done})
    pairs = sorted({(m.season_id, m.pair) for m in done if m.season_id is not None and m.pair is not None})
    open_seeds: set[int] = set()
    open_pairs: set[tuple[int | None, int | None]] = set()
    for chunk in _chunks(seeds):
        open_seeds |= set(s.scalars(select(Match.seed).where(Match.status.in_(OPEN), Match.seed.in_(chunk))))
    for pair_chunk in _chunks(pairs):
        rows = s.execute(
            select(Match.season_id, Match.pair).where(
                Match.status.in_(OPEN), tuple_(Match.season_id, Match.pair).in_(pair_chunk)
            )
        )
        open_pairs |= {(season_id, pair) for season_id, pair in rows}
    for m in done:  # a done match is never open itself, so any open hit is a deck-mate
        if m.seed in open_seeds or (m.season_id, m.pair) in open_pairs:
            hidden.add(m.id)
    return hidden


def _chunks(values: Sequence[T]) -> Iterable[Sequence[T]]:
    for i in range(0, len(values), CHUNK):
        yield values[i : i + CHUNK]
