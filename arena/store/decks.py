"""A match's decks: its secret seed and salt, its public commitment, and new decks for a retry.

Every match's seed comes from the CSPRNG, and its commitment is public from queueing (docs/shuffle.md
§5). A match that started and then went back to the queue (its worker died, or the run was
interrupted) was perhaps watched live, one trick behind, so spectators may know some of its cards.
`redeal` gives it new decks before it is played again, together with every deck-mate still queued,
so that a duplicate pair stays a pair. That is impossible once a deck-mate is done (its result holds
the old decks): then the retry keeps its decks and its live stream is embargoed until it is revealed
(`arena.ladder.visibility.decks_replayed`).
"""

from __future__ import annotations

import logging
import secrets
from typing import Any

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.orm import Session, aliased

from arena.engine import deck_commitment
from arena.engine.commitment import SALT_BYTES
from arena.store.models import Match

log = logging.getLogger(__name__)


def new_seed() -> int:
    """A match seed nobody can predict: 63 bits from the CSPRNG (fits a signed BIGINT)."""
    return secrets.randbits(63)


def commit_decks(s: Session, m: Match) -> None:
    """Give a match a new salt and its public deck commitment (needs the id, so it flushes)."""
    if m.id is None:
        s.flush()
    salt = secrets.token_bytes(SALT_BYTES)
    m.salt = salt.hex()
    m.commitment = deck_commitment(m.seed, f"m{m.id}", salt)


# The one alias of Match for deck-mate queries: built once, since building an alias and adapting
# its columns per query cost five times the query itself (1.3 ms against 0.22 ms per visibility test).
MATE = aliased(Match, name="mate")


def deck_mates(m: Match, other: type[Match] = MATE) -> ColumnElement[bool]:
    """SQL: `other` (an alias of Match, `MATE` by default) shares `m`'s decks: the same seed, or the
    same season and pair.

    Twins share their seed by construction; the pair test also covers rows written before seeds
    were drawn per pair."""
    pair = (m.season_id, m.pair) if m.season_id is not None and m.pair is not None else None
    return mates_of(m.id, m.seed, pair, other)


def mates_of(
    match_id: Any, seed: Any, pair: tuple[Any, Any] | None, other: type[Match] = MATE
) -> ColumnElement[bool]:
    """`deck_mates` of the match `match_id` with `seed` and (season, pair) `pair` (None: none), given
    as values or as bound parameters (a statement built once and run for many matches)."""
    shared = [other.seed == seed]
    if pair is not None:
        shared.append(and_(other.season_id == pair[0], other.pair == pair[1]))
    return and_(other.id != match_id, or_(*shared))


def redeal(s: Session, m: Match) -> bool:
    """New decks for `m`, going back to the queue after a started attempt, and for its queued
    deck-mates; False (and nothing changes) when a deck-mate is done or running."""
    mates = list(s.scalars(select(MATE).where(deck_mates(m))))
    if any(x.status in ("done", "running") for x in mates):
        log.info("match %s goes back to the queue with its decks: a deck-mate is over", m.id)
        return False
    seed = new_seed()
    for x in [m, *(x for x in mates if x.status == "queued")]:
        x.seed = seed
        commit_decks(s, x)
    log.info("match %s goes back to the queue with new decks", m.id)
    return True
