"""The match runner: drives the engine, talks to both seats' streams, runs the clocks, rules verdicts.

Everything here runs on one asyncio event loop. Each seat's stream handler (server.py) posts Events
(JOINED, ACTION, GONE, BAD) into one queue; the runner consumes them, so a seat that is not on move
can still fail (disconnect, flood) at once, and the on-move seat's clock is a plain queue timeout.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from arena.engine import IllegalMove, Match, TrickRecord, deal_deck
from arena.engine.commitment import SALT_BYTES, deck_commitment
from arena.logs import MATCH
from arena.proto import referee_pb2 as pb
from arena.proto import replay_pb2 as rpb
from arena.referee import convert, streams
from arena.referee import verdicts as V
from arena.referee.clock import SeatClock
from arena.referee.handles import BotHandle
from arena.referee.outcome import MatchOver, Outcome
from arena.referee.recorder import Recorder
from arena.referee.session import ACTION, BAD, GONE, JOINED, LOG_DROPPED, SHUTDOWN, Event, EventQueue, Seat
from arena.referee.spec import REMOTE, MatchSpec, welcome
from arena.referee.streams import SeatStreams
from arena.referee.turns import DealTurns

log = logging.getLogger(__name__)
MAX_STALE = 100  # stale actions tolerated before PROTOCOL_ERROR
CARD_FORM = "a rank 7 8 9 T J Q K A then a suit C D H S, upper case, like 'TS' or '9H'"


class MatchRunner:
    """One match between two seats. Create, hand out `tokens`, then `await run()`."""

    def __init__(
        self,
        spec: MatchSpec,
        handles: Sequence[BotHandle | None] = (None, None),
        *,
        pause_idle: bool = False,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.spec = spec
        self.match = Match(spec.rules, spec.seed)
        self.seats = [Seat(0), Seat(1)]
        for seat, (name, version) in zip(self.seats, spec.names or ((REMOTE, ""),) * 2, strict=False):
            seat.name, seat.version = (name, version) if name else (REMOTE, "")
        self.salt = spec.salt if spec.salt is not None else secrets.token_bytes(SALT_BYTES)
        self.commitment = deck_commitment(spec.seed, spec.match_id, self.salt)  # fixed before any deal
        self._handles = list(handles)  # the one list the streams read too: see the `handles` setter
        self.pause_idle = pause_idle
        self.on_event = on_event
        self._emit_failed = False
        self.clocks = [SeatClock(spec.time_control), SeatClock(spec.time_control)]
        self.queue = EventQueue()  # the stream handlers post, the runner waits
        self.recorder = Recorder(spec, self.salt, self.commitment)
        self.streams = SeatStreams(
            spec, self.match, self.seats, self._handles, self.recorder, self.queue, self._fail_now
        )
        self.outcome = Outcome(self._handles)  # each seat's verdict and detail, the end reason
        self.turn_id = 0
        self.pending: tuple[int, int] | None = None  # (seat, turn_id) awaiting an answer
        self._next_deck: tuple[int, list[int]] | None = None  # (deal index, its deck), shuffled ahead
        self._owed: tuple[list[pb.RefereeMessage], list[pb.RefereeMessage]] = ([], [])  # per seat, see _pay
        # the last move, applied but not yet recorded (see _settle): (turns, seat, card, think, trick, seat)
        self._unsettled: tuple[DealTurns, int, int, float, TrickRecord | None, int | None] | None = None
        self.state = "WAITING"
        self.done = asyncio.Event()
        self.result: pb.MatchResult | None = None
        self.record: rpb.MatchRecord | None = None

    @property
    def where(self) -> tuple[int, int, int]:
        """(deal, trick, turn) of the turn in progress, or of the last one, for verdict details."""
        deal = self.match.deal
        if deal is None or not self.turn_id:
            return (0, 0, 0)
        return (deal.index + 1, deal.trick_no, self.turn_id)

    # -- API for the stream handlers (server.py) and play_match --------------------------------------
    @property
    def tokens(self) -> tuple[str, str]:
        return (self.seats[0].token, self.seats[1].token)

    @property
    def handles(self) -> list[BotHandle | None]:
        return self._handles

    @handles.setter
    def handles(self, handles: Sequence[BotHandle | None]) -> None:
        """The bots launched once their sockets were up (play_match): the list is kept, its items set."""
        self._handles[:] = handles

    def shutdown(self) -> None:
        """End the match now (void, SHUTDOWN); safe to call at any time."""
        self.queue.post(Event(SHUTDOWN))

    # -- the match -------------------------------------------------------------------------------------
    async def run(self) -> pb.MatchResult:
        """Play the match to its end and return the result (also in `self.result` / `self.record`)."""
        task = asyncio.current_task()
        assert task is not None
        logged = MATCH.set(self.spec.match_id)  # every line logged for this match says which
        watchdog = asyncio.ensure_future(self.streams.watchdog(task))
        try:
            await self._startup()
            self.state = "PLAYING"
            self._emit("started", names=[s.name for s in self.seats])
            await self._welcome()
            while not self.match.over:
                await self._play_deal()
            self.outcome.end_reason = V.COMPLETED
        except MatchOver:
            pass
        except asyncio.CancelledError:
            if self.streams.stalled is None:  # cancelled from outside: end void, tell the bots, re-raise
                self.outcome.end_void("the match task was cancelled", V.ABORTED)
                await self._finish()
                raise
            task.uncancel()
            i = self.streams.stalled
            self.seats[i].gone = True
            why = f"did not read its messages for {streams.WRITE_STALL:g} s"
            self.outcome.set_failure(i, V.TIMEOUT, why, "", self.where)
            self.outcome.end_reason = V.VERDICT
        except Exception as exc:  # a referee bug must still end the match with a result
            log.exception("referee error; the match ends void")
            self.outcome.end_void(f"referee error: {exc!r}", V.ABORTED)
        finally:
            watchdog.cancel()
            self.queue.stop_timer()
        try:
            await self._finish()
            assert self.result is not None
            log.info("over: winner %s, verdicts %s", self.result.winner, " ".join(self.result.verdicts))
        finally:
            MATCH.reset(logged)
        return self.result

    async def _startup(self) -> None:
        """Wait for both Joins. A seat whose process dies first fails at once, but the other seat
        still gets its chance to join, so that two dead bots give a void match, not a win."""
        limit = self.spec.time_control.startup
        deadline = time.perf_counter() + limit
        failed: set[int] = set()
        while not all(s.joined or s.index in failed for s in self.seats):
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                break
            ev = await self.queue.next(min(remaining, 0.05))
            if ev is None:
                for s in self.seats:
                    if not s.joined and s.index not in failed and self.streams.exited(s.index) is not None:
                        self._set_startup_failed(s.index, limit)
                        failed.add(s.index)
                continue
            if ev.kind != JOINED:
                await self._handle_other(ev)
        for s in self.seats:
            if not s.joined and s.index not in failed:
                self._set_startup_failed(s.index, limit)
                failed.add(s.index)
        if failed:
            raise self.outcome.over()
        self.recorder.players(self.seats)

    def _set_startup_failed(self, i: int, limit: float) -> None:
        self.outcome.startup_failed(i, self.streams.exited(i), limit, self.seats[i].join_error)

    def _welcome_msg(self, s: Seat) -> pb.RefereeMessage:
        return welcome(self.spec, s, self.seats[1 - s.index], self.commitment)

    async def _welcome(self) -> None:
        for s in self.seats:
            s.welcomed = True
            await self.streams.send(s.index, self._welcome_msg(s))

    async def _play_deal(self) -> None:
        m = self.match
        ready = self._next_deck
        deal = m.start_deal(deck=ready[1] if ready is not None and ready[0] == len(m.deals) else None)
        self._next_deck = None
        turns = DealTurns(m)
        self.recorder.deal_started(m)
        self._emit("deal_start", deal=deal.index + 1, dealer=deal.dealer)
        # One message per move on the hot path: each seat's DealStart rides in its first TurnRequest
        # of the deal, each TrickResult in its next TurnRequest, the deal's last one in the DealResult.
        last = None
        while not deal.done:
            seat = deal.to_move
            assert seat is not None
            trick = await self._turn(seat, turns)
            if trick is not None:
                last = trick
        self._settle()
        summary = m.deals[-1]
        self.recorder.deal_finished(summary)
        for s in (0, 1):  # sent before the seat's next message (_pay), the mover's first
            self._owed[s].append(convert.deal_result(m, last, s))
        self._emit("deal_end", deal=summary.index + 1, honours=list(summary.honours), winner=summary.winner,
                   lines=list(m.lines))  # fmt: skip

    async def _turn(self, seat: int, turns: DealTurns) -> TrickRecord | None:
        """One move: the TurnRequest out, the answer in, the card played. Between the two only what
        the next TurnRequest needs is done; the rest waits for `_settle`, while the next bot thinks."""
        m = self.match
        deal = turns.deal
        clock = self.clocks[seat]
        self.turn_id += 1
        tid = self.turn_id
        req = turns.request(seat, tid, clock)
        if self._owed[seat]:
            await self._pay(seat)
        if self.pause_idle:
            self.streams.pause(1 - seat)
            self.streams.resume(seat)
        handed = time.perf_counter()
        await self.streams.send(seat, req)
        sent = time.perf_counter()
        self._settle()
        if self._owed[1 - seat]:
            await self._pay(1 - seat)  # the other seat's DealResult, while this one thinks
        deadline = sent + clock.deadline
        self.pending = (seat, tid)
        while True:
            ev = await self.queue.next(deadline - time.perf_counter())
            if ev is None:
                allowed, bank = clock.deadline, clock.bank
                clock.charge(allowed + 1.0)
                self._fail_now(
                    seat, V.TIMEOUT, f"no answer within {allowed:.3g} s: the move limit of {clock.move:g} s "
                    f"plus the {bank:.3g} s left in the bank",
                )  # fmt: skip
            if ev.kind == ACTION and ev.seat == seat and ev.turn_id == tid:
                break
            await self._handle_other(ev)
        self.pending = None
        # from the write's completion; but a quick bot's answer can be read before this side hears that
        # its write finished, and then from the moment the request was handed to the stream
        think = ev.t - sent if ev.t >= sent else max(0.0, ev.t - handed)
        bank = clock.bank  # before this move's charge, for the detail
        if not clock.charge(think):
            self._fail_now(
                seat, V.TIMEOUT, f"answered after {think:.3f} s; the move limit of {clock.move:g} s "
                f"plus the {bank:.3g} s left in the bank allowed {clock.move + bank:.3g} s",
            )  # fmt: skip
        card = convert.CARD_OF_CODE.get(ev.card)
        if card is None:  # only the exact wire codes are cards
            self._fail_now(
                seat,
                V.PROTOCOL_ERROR,
                f"Action.card is not a card code: a card code is {CARD_FORM}",
                quote=f"Action.card was {ev.card[:20]!r}",
            )
        try:
            trick = m.play(card)
        except IllegalMove as exc:
            self._fail_now(seat, V.ILLEGAL_MOVE, convert.illegal_detail(m, card, exc.legal))
        later = None
        if trick is not None and not deal.done:
            nxt = deal.to_move
            assert nxt is not None  # the deal is not done
            turns.trick_done(trick, nxt)  # the next mover's view now, the other seat's in _settle
            later = 1 - nxt
        self._unsettled = (turns, seat, card, think, trick, later)
        return trick

    async def _pay(self, i: int, final: bool = False) -> None:
        """Send what seat `i` is owed (a DealResult) before anything else goes to it."""
        owed = self._owed[i]
        while owed:
            msg = owed.pop(0)
            if final:
                await self.streams.send(i, msg, timeout=1.0, final=True)
            else:
                await self.streams.send(i, msg)

    def _settle(self) -> None:
        """The last move's bookkeeping: its replay entry, the finished trick in the other seat's view
        and in the live feed. Run once the next TurnRequest is out, so it is off the per-move path."""
        u = self._unsettled
        if u is None:
            return
        self._unsettled = None
        turns, seat, card, think, trick, later = u
        self.recorder.play(seat, convert.CODES[card], think)
        if later is not None:
            assert trick is not None  # `later` is set only when the move ended a trick
            turns.trick_done(trick, later)
        if trick is not None and self.on_event is not None:  # spectators' live feed: the trick's public part
            self._emit("trick", deal=turns.deal.index + 1, trick=trick.no, leader=trick.leader,
                       cards=[convert.CODES[trick.lead], convert.CODES[trick.follow]], winner=trick.winner)  # fmt: skip
        if self._next_deck is None:  # the next deal's shuffle, here rather than between deals
            index = turns.deal.index + 1
            last = self.spec.rules.max_deals
            if last is None or index < last:
                self._next_deck = (index, deal_deck(self.spec.seed, index))

    async def _handle_other(self, ev: Event) -> None:
        """Any event that is not the awaited answer: a stale action, a failure, a shutdown."""
        if ev.kind == ACTION:
            seat = self.seats[ev.seat]
            seat.stale += 1
            if seat.stale > MAX_STALE:
                self._fail_now(
                    ev.seat, V.PROTOCOL_ERROR, f"more than {MAX_STALE} actions for stale or unknown turns"
                )
            pending = self.pending
            expect = (
                f"turn {pending[1]} is open"
                if pending and pending[0] == ev.seat
                else "no turn of yours is open"
            )
            await self.streams.send(ev.seat, pb.RefereeMessage(error=pb.Error(
                code="STALE_TURN", fatal=False, turn_id=ev.turn_id,
                message=f"Action for turn {ev.turn_id} rejected: {expect}",
            )))  # fmt: skip
        elif ev.kind == GONE:
            verdict, why = await self.streams.classify_gone(ev.seat, ev.detail)
            self._fail_now(ev.seat, verdict, why)
        elif ev.kind == BAD:
            self._fail_now(ev.seat, V.PROTOCOL_ERROR, ev.detail)
        elif ev.kind == SHUTDOWN:
            self.outcome.end_void("the referee shut down", V.SHUTDOWN)
            raise MatchOver
        elif ev.kind == LOG_DROPPED:
            seat = self.seats[ev.seat]
            if seat.welcomed:
                await self.streams.send(ev.seat, self.streams.log_dropped(seat))
            else:  # never before its Welcome: it goes with the seat's first turn
                self._owed[ev.seat].append(self.streams.log_dropped(seat))

    # -- verdicts and the end ------------------------------------------------------------------------
    def _fail_now(self, i: int, verdict: str, why: str, quote: str = "") -> NoReturn:
        """`why` is public, so it is the arena's own words; anything that quotes the bot goes in `quote`."""
        self.outcome.set_failure(i, verdict, why, quote, self.where)
        raise self.outcome.over()

    async def _finish(self) -> None:
        self._settle()  # a move applied before the match stopped is still recorded
        out = self.outcome
        result = self.result = out.result(self.match)
        private = out.private()
        if not self.recorder.record.players:
            self.recorder.players(self.seats)
        where = self.where if out.failed else (0, 0, 0)
        self.record = self.recorder.finish(result, private, where, self.seats, self.clocks)
        if self.pause_idle:
            for i in (0, 1):
                self.streams.resume(i)
        for s in self.seats:
            s.end_status = out.end_status(s.index)
            if s.context is None or s.gone:
                continue
            try:
                if not s.welcomed:  # a seat that joined learns its seat, even if the match never began
                    s.welcomed = True
                    await self.streams.send(s.index, self._welcome_msg(s), timeout=1.0, final=True)
                await self._pay(s.index, final=True)
                error = out.error(s.index, self.where[2])
                if error is not None:
                    await self.streams.send(s.index, error, timeout=1.0, final=True)
                await self.streams.send(
                    s.index, pb.RefereeMessage(match_result=result), timeout=1.0, final=True
                )
            except MatchOver:
                pass
        await self.streams.drain()  # late Log lines land in the same record; its counters are redone below
        self.record = self.recorder.finish(result, private, where, self.seats, self.clocks)
        self.state = "OVER"
        for s in self.seats:
            s.finished.set()
        self.done.set()
        self._emit("match_end", winner=result.winner, void=result.void, verdicts=list(out.verdicts),
                   lines=list(self.match.lines))  # fmt: skip

    # -- the spectators' feed -------------------------------------------------------------------------
    def _emit(self, kind: str, **data: Any) -> None:
        if self.on_event is not None:
            try:
                self.on_event({"event": kind, "match_id": self.spec.match_id, **data})
            except Exception:  # a display callback must never break a match; said once per match
                if not self._emit_failed:
                    self._emit_failed = True
                    log.exception(
                        "the match's event callback failed on %r (later failures are not logged)", kind
                    )
