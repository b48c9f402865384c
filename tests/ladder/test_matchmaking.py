"""Pairing order, opponent choice, the repeat cap and reach, owners kept apart, and suspension reasons."""

from __future__ import annotations

import random
from collections import Counter

from arena.ladder.matchmaking import REACH, Candidate, Meetings, pick_pairing, suspension_reason
from arena.verdicts import Verdict


def test_new_bots_first_then_longest_waiting() -> None:
    old = Candidate(1, "a", 1500, games=10, last_scheduled=2)
    older = Candidate(2, "b", 1500, games=10, last_scheduled=1)
    new = Candidate(3, "c", 1500, games=0, last_scheduled=-1)
    first, _ = pick_pairing([old, older, new], random.Random(1), met=Meetings())
    assert first.entry_id == 3
    first, _ = pick_pairing([old, older], random.Random(1), met=Meetings())
    assert first.entry_id == 2


def test_never_the_same_owner() -> None:
    cands = [
        Candidate(1, "alice", 1500, 0, -1),
        Candidate(2, "alice", 1500, 5, 3),
        Candidate(3, "bob", 2500, 5, 4),
    ]
    for seed in range(50):
        first, second = pick_pairing(cands, random.Random(seed), met=Meetings())
        assert first.owner != second.owner
    assert pick_pairing(cands[:2], random.Random(0), met=Meetings()) is None


def test_opponent_near_rating_with_spread() -> None:
    me = Candidate(0, "me", 1500, 5, 0)
    field = [Candidate(i, f"o{i}", 1500 + 100 * (i - 5), 5, 10) for i in range(1, 11)]
    picks = Counter(
        pick_pairing([me, *field], random.Random(seed), met=Meetings())[1].entry_id for seed in range(400)
    )
    assert picks.most_common(1)[0][0] == 5  # the equal-rated bot is the most common opponent
    assert len(picks) >= 3  # but not the only one
    assert picks.get(10, 0) < picks[5] / 4  # a bot 500 points away is rare


def test_busy_bots_wait() -> None:
    me = Candidate(0, "me", 1500, 5, 0)
    busy = Candidate(1, "x", 1500, 5, 1, busy=True)
    idle = Candidate(2, "y", 1800, 5, 1)
    assert pick_pairing([me, busy, idle], random.Random(0), met=Meetings())[1].entry_id == 2


class _Drawn(random.Random):
    """A generator whose Gaussian offset is fixed."""

    def __init__(self, offset: float) -> None:
        super().__init__(0)
        self.offset = offset

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        return self.offset


def test_a_pair_met_its_share_waits_behind_the_others_within_reach() -> None:
    me = Candidate(0, "me", 1500, 9, 0)
    near, next_, far = (
        Candidate(1, "a", 1500, 9, 5),
        Candidate(2, "b", 1600, 9, 5),
        Candidate(3, "c", 1500 + REACH + 1, 9, 5),
    )
    met = Meetings()
    assert pick_pairing([me, near, next_, far], _Drawn(0.0), met=met)[1].entry_id == 1
    met.add(0, 1, 2)  # 2 of my 9 matches over 3 others: under its share (3)
    assert pick_pairing([me, near, next_, far], _Drawn(0.0), met=met)[1].entry_id == 1
    met.add(0, 1)  # 3 of 9: its share; the next nearest within reach goes first
    assert pick_pairing([me, near, next_, far], _Drawn(0.0), met=met)[1].entry_id == 2
    met.add(0, 2, 3)  # both met their share: the nearest of all again, never the one out of reach
    assert pick_pairing([me, near, next_, far], _Drawn(0.0), met=met)[1].entry_id == 1
    assert pick_pairing([me, near, next_, far], _Drawn(0.0), met=met, capped=False)[1].entry_id == 1
    # out of reach waits even when the offset points at it, unless all else is over the cap too
    assert pick_pairing([me, next_, far], _Drawn(REACH + 1), met=Meetings())[1].entry_id == 2
    assert pick_pairing([me, far], _Drawn(0.0), met=Meetings())[1].entry_id == 3


def test_opponents_spread_over_the_field_within_reach() -> None:
    """A bot's 40 matches among 10 bots within reach: no opponent more than twice its share (the
    rule before gave the nearest most of them)."""
    field = [Candidate(i, f"o{i}", 1500 + 30 * i, 100, 50) for i in range(10)]
    for capped, most in ((True, 8), (False, 40)):
        met, rng, got = Meetings(), random.Random(3), Counter[int]()
        for k in range(40):
            me = Candidate(99, "me", 1500, k, -2)  # always the longest waiting
            _, other = pick_pairing([me, *field], rng, met=met, capped=capped)
            met.add(99, other.entry_id)
            got[other.entry_id] += 1
        assert (max(got.values()) <= most) if capped else (max(got.values()) > 8), (capped, got)


def test_suspension_needs_mostly_own_faults() -> None:
    assert suspension_reason([("CRASH", i) for i in range(3)]) is None  # too few matches to judge
    assert suspension_reason([("OK", i) for i in range(5)] + [("CRASH", i) for i in range(5, 10)]) is None
    own = [("OK", 1)] * 4 + [("CRASH", 7)] * 4 + [("CPU_LIMIT", 9), ("CPU_LIMIT", 17)]
    reason = suspension_reason(own)
    assert reason == (
        "suspended: 6 of its last 10 matches ended in its own fault (CRASH ×4, CPU_LIMIT ×2); "
        "last: CPU_LIMIT in match 17. Submit a fixed version to play again."
    )


def test_every_fault_verdict_counts_toward_suspension_and_only_those() -> None:
    faults = [v for v in Verdict if v.fault]
    assert {str(v) for v in faults} >= {
        "CRASH", "TIMEOUT", "ILLEGAL_MOVE", "PROTOCOL_ERROR", "MEMORY_LIMIT",
        "CPU_LIMIT", "PIDS_LIMIT", "STARTUP_FAILED", "BUILD_FAILED",
    }  # fmt: skip
    for v in faults:
        reason = suspension_reason([("OK", 1), ("OK", 2), (str(v), 3), (str(v), 4), (str(v), 5)])
        assert reason is not None and f"({v} ×3)" in reason, v
    # OK, and names that are no verdict at all (an old or hostile record), never count
    assert suspension_reason([("OK", i) for i in range(10)]) is None
    assert suspension_reason([("api_key=SECRET", i) for i in range(10)]) is None
