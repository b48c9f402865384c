"""The seat-stream side of a match: events from the stream handlers, reads, writes, logs, telling
a crash from a disconnect, the late-log drain and the status each call ends with. `MatchRunner`
(match.py) mixes this in and owns the attributes it uses: `spec`, `seats`, `handles`, `events`,
`_waiter`, `_deadline`, `_timer`, `_timer_at`, `_writing`, `_stalled`, `recorder`, `match`,
`pause_idle`, `on_event`, `verdicts`, `details`, `end_reason`, and the verdict method `_fail_now`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

import grpc

from arena.proto import referee_pb2 as pb
from arena.referee import verdicts as V
from arena.referee.session import ACTION, BAD, GONE, JOINED, LOG_DROPPED, SHUTDOWN, Event, Seat, cap_text

if TYPE_CHECKING:
    from arena.engine import Match
    from arena.referee.handles import BotHandle
    from arena.referee.match import MatchSpec
    from arena.referee.recorder import Recorder

log = logging.getLogger(__name__)
EXIT_GRACE = 1.0  # after a stream drops, how long to wait for the process to exit (CRASH vs DISCONNECT)
# A seat whose stream takes no message for this long stopped reading: TIMEOUT. Read at run time
# (the watchdog polls at a quarter of it, at most every second), so tests may shorten it.
WRITE_STALL = 10.0
LATE_LOG_GRACE = 1.0  # after MatchResult: how long the referee still reads a seat that has not closed
# the status a seat's call ends with when its own verdict ended the match (after Error and MatchResult)
FAULT_STATUS: dict[str, str] = {
    V.TIMEOUT: "DEADLINE_EXCEEDED",
    V.ILLEGAL_MOVE: "FAILED_PRECONDITION",
    V.PROTOCOL_ERROR: "INVALID_ARGUMENT",
    V.DISCONNECT: "FAILED_PRECONDITION",
}
CUT_WAIT = 0.1  # after an EOF: how long to wait for the cancellation that tells a cut call from a half-close
# A stream that ended by other means than its reader (a cancelled call, a failed write) waits at most this
# long for its reader to end; a dead call's reads end at once, so this only bounds a reader that is stuck.
READER_GRACE = 1.0


def _describe_exit(code: int) -> str:
    if code < 0:
        import signal

        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class SeatStreams:
    """Mixin: the runner's plumbing to and from the two seats' streams (one asyncio loop)."""

    # set by MatchRunner.__init__ (declared here for the type checker only)
    spec: MatchSpec
    match: Match
    seats: list[Seat]
    handles: list[BotHandle | None]
    events: collections.deque[Event]
    _waiter: asyncio.Future[Event | None] | None
    _deadline: float
    _timer: asyncio.TimerHandle | None
    _timer_at: float
    _writing: tuple[int, float] | None
    _stalled: int | None
    recorder: Recorder
    pause_idle: bool
    on_event: Callable[[dict[str, Any]], None] | None
    verdicts: list[str]
    details: list[str]
    end_reason: str

    if TYPE_CHECKING:

        def _fail_now(self, i: int, verdict: str, why: str, quote: str = "") -> NoReturn: ...

    def post(self, event: Event) -> None:
        """Hand an event to the runner (from the stream handlers, on the same loop)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(event)
        else:
            self.events.append(event)

    def shutdown(self) -> None:
        """End the match now (void, SHUTDOWN); safe to call at any time."""
        self.post(Event(SHUTDOWN))

    def attach(self, seat: Seat, context: Any, join: pb.Join) -> None:
        seat.context = context
        seat.joined = True
        seat.self_name = join.bot_name[:64]  # private: the seat keeps its registered name (match.py)
        self.post(Event(JOINED, seat.index))

    async def read_loop(self, seat: Seat, context: Any) -> None:
        """Read one seat's stream until it ends; Logs are handled here, the rest becomes Events.
        It keeps reading after the match's result is sent, until the bot closes or `_finish` stops
        waiting, so that the Log lines a bot sent before it got its MatchResult are all kept.
        Its last report (BAD or GONE) is posted before `reader_done` is set, in one step."""
        try:
            await self._read(seat, context)
        finally:
            seat.reader_done.set()

    async def stream_gone(self, seat: Seat, reader: asyncio.Future[None]) -> None:
        """The seat's call ended under its handler (the client cancelled it): post GONE, but only once
        the reader has reported what the bot sent before it went, so that a protocol violation is
        always ahead of the stream's end in the queue."""
        seat.gone = True
        try:
            await asyncio.wait([reader], timeout=READER_GRACE)
        finally:
            seat.reader_done.set()  # a reader cancelled before it ever ran never sets it itself
            self.post(Event(GONE, seat.index, "dropped its connection"))

    async def _reader_ended(self, seat: Seat) -> None:
        """Wait for the seat's reader to end: everything the bot sent before its stream ended has then
        been reported (a violation sets `bad_reason`), whichever of the reader and the runner ran first."""
        if seat.context is None or seat.reader_done.is_set():
            return
        try:
            await asyncio.wait_for(seat.reader_done.wait(), READER_GRACE)
        except TimeoutError:
            log.warning(
                "seat %d: its reader had not ended %g s after its stream did", seat.index, READER_GRACE
            )

    async def _read(self, seat: Seat, context: Any) -> None:
        idx = seat.index
        while True:
            try:
                msg = await context.read()  # the deserializer never raises (server._parse_bot_message)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # gRPC itself failed the read: the stream is gone
                self.post(Event(GONE, idx, f"broke its stream ({type(exc).__name__})"))
                return
            t = time.perf_counter()
            if msg is grpc.aio.EOF:
                seat.half_closed = True
                self.post(Event(GONE, idx, "closed its stream"))
                return
            kind = msg.WhichOneof("msg")
            if kind == "action":
                action = msg.action
                event = Event(ACTION, idx, "", action.turn_id, action.card, t)
                waiter = self._waiter  # self.post(event), inlined: every move comes this way
                if waiter is not None and not waiter.done():
                    waiter.set_result(event)
                else:
                    self.events.append(event)
            elif kind == "log":
                self._log(seat, msg.log.text)
            else:
                reason = getattr(msg, "reason", None)  # server.BadBotMessage: the referee's own words
                seat.bad_reason = (
                    f"sent {reason}" if reason
                    else "sent a second Join on its stream" if kind == "join"
                    else "sent an empty BotMessage (no join, action or log set)"
                )  # fmt: skip
                self.post(Event(BAD, idx, seat.bad_reason))
                return

    def _log(self, seat: Seat, text: str) -> None:
        limits = self.spec.log_limits
        if not seat.admit_log(limits):
            if seat.logs_dropped == 1:  # the first drop: the runner tells the bot, once
                self.post(Event(LOG_DROPPED, seat.index))
            return
        text, cut = cap_text(text, limits.max_line_bytes)
        seat.logs_truncated += cut
        deal = self.match.deal
        self.recorder.log(
            seat.index, 0 if deal is None else deal.index + 1, 0 if deal is None else deal.trick_no, text
        )

    def _log_dropped(self, seat: Seat) -> pb.RefereeMessage:
        """The one Error LOG_DROPPED a seat gets: the count so far, the limit, and that no more follow."""
        limits = self.spec.log_limits
        n = seat.logs_dropped
        cap = (
            f"the match's total of {limits.max_lines} lines is reached"
            if seat.logs_kept >= limits.max_lines
            else f"over the rate of {limits.lines_per_second} lines per second (burst {limits.burst})"
        )
        return pb.RefereeMessage(error=pb.Error(code="LOG_DROPPED", fatal=False, message=(
            f"{n} Log line{'s' if n != 1 else ''} dropped: {cap}; this is said once, later drops are "
            "only counted (SeatStats.logs_dropped in the replay)"
        )))  # fmt: skip

    async def _classify_gone(self, i: int, reason: str) -> tuple[str, str]:
        seat = self.seats[i]
        if not seat.half_closed:  # a half-closed stream can still be written: it hears how it ended
            seat.gone = True
        await self._reader_ended(seat)  # a violation the bot sent before it went is then known
        if seat.half_closed and not seat.gone:
            # gRPC ends a call whose message is over its receive limit with an EOF and then a
            # cancellation, like a bot that cancels; a real half-close is an EOF alone
            await asyncio.sleep(CUT_WAIT)
        if seat.half_closed:
            reason = (
                f"had its call cut off (it cancelled the call, or sent a message over gRPC's receive limit "
                f"of {seat.receive_cap} bytes, which gRPC refuses before the referee can read it)"
                if seat.gone
                else "half-closed its stream (closed its sending side) before the match ended"
            )
        if seat.bad_reason:
            return V.PROTOCOL_ERROR, seat.bad_reason
        if self.handles[i] is None:
            return V.DISCONNECT, f"the bot {reason}"
        loop_end = time.perf_counter() + EXIT_GRACE
        while self._exited(i) is None and time.perf_counter() < loop_end and not seat.bad_reason:
            await asyncio.sleep(0.02)
        if seat.bad_reason:
            return V.PROTOCOL_ERROR, seat.bad_reason
        code = self._exited(i)
        if code is None:
            return V.DISCONNECT, f"the bot {reason} while its process kept running"
        return V.CRASH, f"the bot's process died ({_describe_exit(code)}); the bot {reason}"

    async def _drain(self) -> None:
        """Keep reading the seats' streams for Log lines sent before their MatchResult arrived, until
        each bot closes its side (or is gone), for at most LATE_LOG_GRACE seconds."""
        waits = [
            asyncio.ensure_future(s.reader_done.wait())
            for s in self.seats
            if s.context is not None and not s.reader_done.is_set()
        ]
        if waits:
            _, pending = await asyncio.wait(waits, timeout=LATE_LOG_GRACE)
            for w in pending:
                w.cancel()

    def _end_status(self, i: int) -> tuple[str, str]:
        """The gRPC status that ends seat i's call: OK unless the match ended by its own fault or
        by the referee (the details then say how, as its Error and MatchResult did)."""
        if self.end_reason == V.SHUTDOWN:
            return "UNAVAILABLE", "the referee shut down; the match is void"
        if self.end_reason == V.ABORTED:
            return "ABORTED", "the match was aborted by the referee; it is void"
        verdict = self.verdicts[i]
        if verdict == V.OK:
            return "OK", ""
        return FAULT_STATUS.get(verdict, "ABORTED"), f"{verdict}: {self.details[i].split(chr(10))[0]}"

    def _exited(self, i: int) -> int | None:
        h = self.handles[i]
        return None if h is None else h.exit_status()

    async def _next_event(self, timeout: float) -> Event | None:
        """The next event, or None after `timeout` seconds. This is on every move's path, so it waits
        on a bare future (no asyncio.Queue or asyncio.timeout()) and re-uses one timer (`_tick`)."""
        if self.events:
            return self.events.popleft()
        if timeout <= 0:
            return None
        loop = asyncio.get_running_loop()
        deadline = self._deadline = time.perf_counter() + timeout
        timer = self._timer
        if timer is None or deadline < self._timer_at:
            if timer is not None:
                timer.cancel()
            self._timer = loop.call_later(timeout, self._tick)
            self._timer_at = deadline
        waiter = self._waiter = loop.create_future()
        try:
            return await waiter
        finally:
            self._waiter = None

    def _tick(self) -> None:
        """The wait timer fired: end the wait if its deadline has passed, else sleep again until it.
        Each move's deadline is later than the last one's when the clocks are alike, so one timer,
        re-armed when it fires early, serves many moves instead of one set and cancelled per move."""
        self._timer = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        left = self._deadline - time.perf_counter()
        if left > 0:
            self._timer = asyncio.get_running_loop().call_later(left, self._tick)
            self._timer_at = self._deadline
        else:
            waiter.set_result(None)

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _send(
        self, i: int, msg: pb.RefereeMessage, timeout: float | None = None, final: bool = False
    ) -> None:
        """Write to a seat. A write that does not complete (the bot stopped reading its stream) ends
        the seat with TIMEOUT: after `timeout` if given, else when the watchdog sees it stalled."""
        seat = self.seats[i]
        if seat.context is None or seat.gone:
            return
        try:
            if timeout is None:
                self._writing = (i, time.perf_counter())
                await seat.context.write(msg)
                self._writing = None
            else:
                async with asyncio.timeout(timeout):
                    await seat.context.write(msg)
        except TimeoutError:
            seat.gone = True
            if not final:
                self._fail_now(i, V.TIMEOUT, f"did not read its messages for {timeout:.3g} s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._writing = None
            if final:
                seat.gone = True
                return
            verdict, why = await self._classify_gone(i, f"could not be written to ({type(exc).__name__})")
            self._fail_now(i, verdict, why)

    async def _watchdog(self, task: asyncio.Task) -> None:
        """Cancel the runner when a write has been stuck for WRITE_STALL seconds."""
        while True:
            await asyncio.sleep(min(1.0, WRITE_STALL / 4))
            w = self._writing
            if w is not None and time.perf_counter() - w[1] > WRITE_STALL:
                self._stalled = w[0]
                task.cancel()
                return

    def _pause(self, i: int) -> None:
        h = self.handles[i]
        if h is not None:
            h.pause()

    def _resume(self, i: int) -> None:
        h = self.handles[i]
        if h is not None and self.pause_idle:
            h.resume()

    def _emit(self, kind: str, **data: Any) -> None:
        if self.on_event is not None:
            try:
                self.on_event({"event": kind, "match_id": self.spec.match_id, **data})
            except Exception:  # a display callback must never break a match; said once per match
                if not getattr(self, "_emit_failed", False):
                    self._emit_failed = True
                    log.exception(
                        "the match's event callback failed on %r (later failures are not logged)", kind
                    )
