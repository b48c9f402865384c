"""Who plays whom next, and who is suspended.

Pairing (Halite's rule): the bot that has waited longest goes first, bots that have never played
before any other; its opponent is the bot whose rating is nearest to its own rating plus a random
offset (so neighbours meet most, but not only each other), never a version of the same owner unless
the season allows it (`--pair-same-owner`). The ratings are the season fit's (`pairing_fit.pairing_ratings`):
pairing on live Elo feeds its own noise back and stretches it.
Bots already in a queued or running match wait unless nobody else can play.

Suspension: a bot whose recent matches mostly ended in its own fault verdict (every `Verdict` whose
`fault` is set) is suspended, with a reason its owner can read. The reason is public (the bot's page
and API) so it is written from arena facts alone, verdict names and match ids, never from a verdict
detail, which could quote the bot's own output.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from arena.verdicts import Verdict, is_fault

SPREAD = 100.0  # standard deviation of the random offset, Elo points
RECENT = 10  # how many recent matches suspension looks at
MIN_RECENT = 4  # and how many it needs before judging


@dataclass(frozen=True)
class Candidate:
    entry_id: int
    owner: str
    rating: float
    games: int  # matches scheduled so far in this season
    last_scheduled: int  # season schedule index when last paired (-1: never)
    busy: bool = False


def _waiting_order(c: Candidate) -> tuple:
    return (c.busy, c.games > 0, c.last_scheduled, c.entry_id)


def pick_pairing(
    cands: Sequence[Candidate], rng: random.Random, spread: float = SPREAD, *, same_owner: bool = False
) -> tuple[Candidate, Candidate] | None:
    """The next pairing (first = the longest-waiting bot), or None if no two bots may meet.
    `same_owner`: two bots of one owner may meet (a season option; default not)."""
    for first in sorted(cands, key=_waiting_order):
        others = [c for c in cands if c.entry_id != first.entry_id and (same_owner or c.owner != first.owner)]
        if not others:
            continue
        idle = [c for c in others if not c.busy] or others
        target = first.rating + rng.gauss(0.0, spread)
        second = min(idle, key=lambda c: (abs(c.rating - target), c.last_scheduled, c.entry_id))
        return first, second
    return None


def suspension_reason(
    recent: Sequence[tuple[str, int]], *, window: int = RECENT, minimum: int = MIN_RECENT
) -> str | None:
    """Given a bot's own (verdict, match id) in its matches, oldest first, say why to suspend it, or None.

    Only `Verdict` names and match ids go into the text: it contains nothing the bot wrote."""
    last = list(recent)[-window:]
    if len(last) < minimum:
        return None
    faults = [(Verdict(v), match_id) for v, match_id in last if is_fault(v)]
    if len(faults) * 2 <= len(last):
        return None
    counts = Counter(v for v, _ in faults)
    summary = ", ".join(f"{v.value} ×{n}" for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    verdict, match_id = faults[-1]
    return (
        f"suspended: {len(faults)} of its last {len(last)} matches ended in its own fault ({summary}); "
        f"last: {verdict.value} in match {int(match_id)}. Submit a fixed version to play again."
    )
