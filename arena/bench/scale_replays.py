"""Real replays for `arena bench scale`'s synthetic stores: matches played by the engine, recorded by
the referee's own `Recorder`, exactly as a played match's record (deals, decks, every card, the
result, the clocks' counters), only without processes: each seat plays a seeded random legal card.

A store of a million matches does not need a million distinct games to be read like a real one: the
builder stores a pool of a few hundred, round-robin, each match taking a record whose result agrees
with the match's own (seat 0 won, seat 1 won, or a draw). Every record has the season's rules, so
the match page re-simulates it as it would a played match; its seed is the pool's, not the match's
(the match row keeps its own seed, salt and commitment, which the reveal rules read).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.engine import Match, Rules
from arena.proto.codec import encode_record
from arena.referee import verdicts as V
from arena.referee.clock import SeatClock, TimeControl
from arena.referee.convert import CODES
from arena.referee.outcome import Outcome
from arena.referee.recorder import Recorder
from arena.referee.session import Seat
from arena.referee.spec import MatchSpec


@dataclass(frozen=True)
class PoolRecord:
    """One played match: what its match row repeats (lines, deals) and its encoded record."""

    lines: tuple[int, int]
    deals: int
    data: bytes


#: A pool's records keyed by the result they hold: 0 or 1 (that seat won) or None (a draw).
Pool = dict[int | None, list[PoolRecord]]


def play_record(
    rules: Rules, seed: int, names: tuple[str, str], tc: TimeControl
) -> tuple[int | None, PoolRecord]:
    """One whole match played by the engine with seeded random legal cards: (winner, its record)."""
    spec = MatchSpec(rules=rules, seed=seed, time_control=tc, match_id=f"pool{seed}",
                     names=((names[0], "1"), (names[1], "1")))  # fmt: skip
    salt = random.Random(seed).randbytes(16)
    recorder = Recorder(spec, salt, "")
    seats = [Seat(index=i, name=names[i], version="1", self_name=names[i]) for i in (0, 1)]
    clocks = [SeatClock(tc), SeatClock(tc)]
    rng = random.Random(seed ^ 0x5CA1E)
    m = Match(rules, seed)
    recorder.players(seats)
    while not m.over:
        deal = m.start_deal()
        recorder.deal_started(m)
        while not deal.done:
            seat = deal.to_move
            assert seat is not None
            card = rng.choice(deal.legal_cards())
            m.play(card)
            think = rng.uniform(0.001, 0.05)
            clocks[seat].charge(think)
            recorder.play(seat, CODES[card], think)
        recorder.deal_finished(m.deals[-1])
    outcome = Outcome([None, None])
    outcome.end_reason = V.COMPLETED
    record = recorder.finish(outcome.result(m), outcome.private(), (0, 0, 0), seats, clocks)
    return m.winner, PoolRecord((m.lines[0], m.lines[1]), len(m.deals), encode_record(record))


def replay_pool(
    rule_pairs: list[str],
    records: int,
    seed: int,
    progress: Callable[[float], None] = lambda f: None,
) -> Pool:
    """`records` real records under the rules `rule_pairs` (Rules.from_pairs form), by result."""
    rules = Rules.from_pairs(rule_pairs)
    tc = TimeControl(move=1.0, bank=10.0)
    pool: Pool = {0: [], 1: [], None: []}
    rng = random.Random(seed)
    for n in range(records):
        winner, data = play_record(rules, rng.getrandbits(63), ("seat0", "seat1"), tc)
        pool[winner].append(data)
        progress((n + 1) / records)
    if not pool[None]:  # draws are rare: a match drawn in the store takes a decided record then
        pool[None] = pool[0][:1] or pool[1][:1]
    for winner in (0, 1):
        if not pool[winner]:
            pool[winner] = pool[1 - winner][:1]
    return pool
