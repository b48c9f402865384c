"""What of a match a spectator may see: the reveal state, the reason while it is sealed, and the
first-line rule for the arena's sentences.

A match is sealed until `arena.ladder.visibility` says otherwise (the one reveal test, for a
match, a page or inside a list's query): while a match or its
duplicate twin (same season and pair, same decks) is open, its seed, salt, result and replay stay
private (docs/security.md). Verdict details and suspension reasons are shown to the public only up to
their first line: the arena writes that line itself; anything after it may quote the bot's output.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.store import models as m

PUBLIC_LINE = 300  # characters of an arena sentence shown publicly


def first_line(text: str | None) -> str:
    """The arena's own sentence: the first line of a detail or reason, capped (defence in depth)."""
    return str(text or "").split("\n", 1)[0][:PUBLIC_LINE]


def sealed_reason(match_id: int, status: str, twin_count: int) -> str:
    """One line saying why a match's replay is not public yet."""
    if status == "failed":
        return f"match {match_id} failed: it was not played to the end and has no replay"
    if status != "done":
        when = "it and its duplicate twin have finished" if twin_count else "it has finished"
        return f"match {match_id} is not over: its replay is published when {when}"
    return (
        f"match {match_id} is over but its duplicate twin is not: its replay is published when both "
        "have finished"
    )


@dataclass(frozen=True)
class MatchFacts:
    """What the access checks need to know about one match."""

    id: int
    status: str
    revealed: bool
    reason: str | None  # why it is sealed, when it is
    seats: tuple[tuple[str, int, str], ...]  # (registered name, version number, owner) per seat
    has_replay: bool

    @property
    def labels(self) -> list[str]:
        return [f"{name}@{number}" for name, number, _ in self.seats]


def has_replay(s: Session, match_id: int) -> bool:
    """A stored, non-empty replay (a match recorded without one stores no bytes)."""
    q = select(func.count()).where(m.Replay.match_id == match_id, func.length(m.Replay.data) > 0)
    return (s.scalar(q) or 0) > 0


def twins(s: Session, match: m.Match) -> int:
    """How many other matches share this one's decks (its duplicate twins)."""
    if match.pair is None:
        return 0
    q = select(func.count()).where(
        m.Match.season_id == match.season_id, m.Match.pair == match.pair, m.Match.id != match.id
    )
    return s.scalar(q) or 0
