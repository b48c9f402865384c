"""Builds the MatchRecord (replay.proto) while a match is played."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from arena.engine import DealSummary, Match
from arena.proto import referee_pb2 as pb
from arena.proto import replay_pb2 as rpb
from arena.proto.codec import FORMAT
from arena.referee.clock import SeatClock
from arena.referee.convert import codes, rules_to_proto
from arena.referee.session import Seat

if TYPE_CHECKING:
    from arena.referee.spec import MatchSpec


class Recorder:
    def __init__(self, spec: MatchSpec, salt: bytes, commitment: str) -> None:
        self.record = rpb.MatchRecord(
            format=FORMAT,
            match_id=spec.match_id,
            seed=spec.seed,
            rules=rules_to_proto(spec.rules),
            time_control=spec.time_control.to_proto(),
            commitment=commitment,
            salt=salt.hex(),
        )
        self._t0 = time.perf_counter()
        self.record.timing.started_unix_ms = int(time.time() * 1000)

    def players(self, seats: list[Seat]) -> None:
        """The registered names; what each bot called itself is kept apart (private)."""
        del self.record.players[:]
        for s in seats:
            self.record.players.add(
                seat=s.index, name=s.name, version=s.version, self_reported_name=s.self_name
            )

    def deal_started(self, match: Match) -> None:
        deal = match.deal
        assert deal is not None
        self._plays = self.record.deals.add(
            number=deal.index + 1, dealer=deal.dealer, deck=codes(deal.deck)
        ).plays

    def play(self, seat: int, card: str, think: float) -> None:
        self._plays.add(seat=seat, card=card, think_us=min(int(think * 1e6), 2**32 - 1))

    def deal_finished(self, summary: DealSummary) -> None:
        out = summary.outcome
        self.record.deals[-1].outcome.CopyFrom(
            rpb.DealOutcomeRecord(
                honours=list(out.honours), winner=-1 if out.winner is None else out.winner,
                value=out.value, lines=list(out.lines),
            )
        )  # fmt: skip

    def log(self, seat: int, deal: int, trick: int, text: str) -> None:
        self.record.logs.add(seat=seat, deal=deal, trick=trick, text=text)

    def finish(
        self,
        result: pb.MatchResult,
        private: list[str],
        where: tuple[int, int, int],
        seats: list[Seat],
        clocks: list[SeatClock],
    ) -> rpb.MatchRecord:
        """The result as the bots were told it, plus what only the record keeps: where a verdict
        struck, the private details (quotes of the bots' own text) and the per-seat counters."""
        r = result
        self.record.result.CopyFrom(rpb.ResultRecord(
            winner=r.winner, void=r.void, verdicts=r.verdicts, details=r.details, lines=r.lines, flags=r.flags,
            deals_played=r.deals_played, end_reason=r.end_reason, failed_deal=where[0], failed_trick=where[1],
            failed_turn_id=where[2], private_details=private,
        ))  # fmt: skip
        del self.record.stats[:]
        for s in seats:
            self.record.stats.add(seat=s.index, stale_actions=s.stale, logs_dropped=s.logs_dropped,
                                  logs_truncated=s.logs_truncated)  # fmt: skip
        t = self.record.timing
        t.duration_ms = int((time.perf_counter() - self._t0) * 1000)
        del t.bank_left_ms[:], t.think_total_us[:], t.moves[:]
        t.bank_left_ms.extend(int(c.bank * 1000) for c in clocks)
        t.think_total_us.extend(int(c.total * 1e6) for c in clocks)
        t.moves.extend(c.moves for c in clocks)
        return self.record
