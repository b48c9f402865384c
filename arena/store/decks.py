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

from sqlalchemy import select
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


def redeal(s: Session, m: Match) -> bool:
    """New decks for `m`, going back to the queue after a started attempt, and for its queued
    deck-mates; False (and nothing changes) when a deck-mate is done or running."""
    from arena.store.queue import deck_mates  # the queue module calls this one

    other = aliased(Match)
    mates = list(s.scalars(select(other).where(deck_mates(m, other))))
    if any(x.status in ("done", "running") for x in mates):
        log.info("match %s goes back to the queue with its decks: a deck-mate is over", m.id)
        return False
    seed = new_seed()
    for x in [m, *(x for x in mates if x.status == "queued")]:
        x.seed = seed
        commit_decks(s, x)
    log.info("match %s goes back to the queue with new decks", m.id)
    return True
