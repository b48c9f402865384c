"""Who plays whom next, and who is suspended.

Pairing, for information: the bot that has waited longest goes first, bots that have never played
before any other; its opponent is the one whose result against it is least certain (the predicted
score nearest ½: the rating nearest its own plus a random offset, so pairings are no fixed cycle)
among those it has met less than its share and whose rating is within `REACH` of its own; only when
there is none, the same choice among the rest. A pair's share is the first's matches so far over the
other active entries (a round robin's share): a bot meets each opponent within reach about equally
often instead of the same neighbour again and again (issue #33: 160 of a bot's 248 matches were
against one bot). Never a version of the same owner unless the season allows it
(`--pair-same-owner`). The ratings are the season fit's (`pairing_fit.pairing_ratings`): pairing
on live Elo feeds its own noise back and stretches it. `pick_pairing(..., capped=False)` is the
rule before (Halite's: nearest rating plus offset, no cap), kept for the simulations that compare
the two (`arena.ladder.simulate_pairing`, `arena bench matchmaking`).
Bots already in a queued or running match wait unless nobody else can play.

Suspension: a bot whose recent matches mostly ended in its own fault verdict (every `Verdict` whose
`fault` is set) is suspended, with a reason its owner can read. The reason is public (the bot's page
and API) so it is written from arena facts alone, verdict names and match ids, never from a verdict
detail, which could quote the bot's own output.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from arena.verdicts import Verdict, is_fault

SPREAD = 100.0  # standard deviation of the random offset, Elo points
REACH = 400.0  # Elo: farther apart, a result is near certain (predicted score beyond 0.09-0.91)
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


class Meetings:
    """How many matches each pair of entries has had: what the repeat cap counts (in the ladder,
    the season's matches of the pair, whatever their kind or status)."""

    def __init__(self) -> None:
        self._met: defaultdict[int, Counter[int]] = defaultdict(Counter)

    def add(self, a: int, b: int, matches: int = 1) -> None:
        self._met[a][b] += matches
        self._met[b][a] += matches

    def of(self, entry_id: int) -> Mapping[int, int]:
        """Each entry's matches with `entry_id` (absent: none)."""
        return self._met.get(entry_id, Counter())


def _waiting_order(c: Candidate) -> tuple:
    return (c.busy, c.games > 0, c.last_scheduled, c.entry_id)


def over_cap(first: Candidate, other: Candidate, met: int, field: int) -> bool:
    """Whether `other` waits behind the rest as `first`'s opponent: it is out of reach, or the pair
    has met at least once and at least its share (`met` of `first.games` over the `field` other
    active entries: met * field >= games, in integers as the SQL has it)."""
    return abs(other.rating - first.rating) > REACH or (met >= 1 and met * field >= first.games)


def pick_pairing(
    cands: Sequence[Candidate],
    rng: random.Random,
    spread: float = SPREAD,
    *,
    met: Meetings,
    same_owner: bool = False,
    capped: bool = True,
) -> tuple[Candidate, Candidate] | None:
    """The next pairing (first = the longest-waiting bot), or None if no two bots may meet.
    `met`: the matches each pair has had. `same_owner`: two bots of one owner may meet (a season
    option; default not). `capped=False`: the rule before (no cap, no reach), for comparison."""
    for first in sorted(cands, key=_waiting_order):
        others = [c for c in cands if c.entry_id != first.entry_id and (same_owner or c.owner != first.owner)]
        if not others:
            continue
        target = first.rating + rng.gauss(0.0, spread)
        seen, field = met.of(first.entry_id), len(cands) - 1
        keys = [
            (
                c.busy,
                capped and over_cap(first, c, seen.get(c.entry_id, 0), field),
                abs(c.rating - target),
                c.last_scheduled,
                c.entry_id,
            )
            for c in others
        ]
        return first, others[min(range(len(others)), key=keys.__getitem__)]
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
