"""The seat side of a match: reads, writes, Log lines, telling a crash from a disconnect, the late-log
drain, and the bots' processes (exit status, pause and resume). `MatchRunner` (match.py) holds one `SeatStreams`
and hands it, when it is made, everything it uses: the constructor's arguments are the whole contract.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

from arena.proto import referee_pb2 as pb
from arena.proto.lenient import Undecodable
from arena.referee import verdicts as V
from arena.referee.session import ACTION, BAD, GONE, JOINED, LOG_DROPPED, Event, EventQueue, Seat, cap_text

if TYPE_CHECKING:
    from arena.engine import Match
    from arena.referee.handles import BotHandle
    from arena.referee.recorder import Recorder
    from arena.referee.spec import MatchSpec

log = logging.getLogger(__name__)
EXIT_GRACE = 5.0  # after a stream drops, how long to wait for the process to exit (CRASH vs DISCONNECT;
# 1 s, then 2 s, were short on a loaded machine: a Python bot unwinding from a refused 1 MiB message,
# and one dying of its own exception (the hostile write_bundle, in a fresh-clone run at load), took longer)
# A seat whose stream takes no message for this long stopped reading: TIMEOUT. Read at run time
# (the watchdog polls at a quarter of it, at most every second), so tests may shorten it.
WRITE_STALL = 10.0
LATE_LOG_GRACE = 1.0  # after MatchResult: how long the referee still reads a seat that has not closed
CUT_WAIT = 0.1  # after an EOF: how long to wait for the cancellation that tells a cut call from a half-close
# A stream that ended by other means than its reader (a cancelled call, a failed write) waits at most this
# long for its reader to end; a dead call's reads end at once, so this only bounds a reader that is stuck.
READER_GRACE = 1.0

_MESSAGES = (pb.BotMessage, Undecodable)  # a read's result but a stream's end, built once


class StreamEnded(Exception):
    """Raised by a seat's `read()` when its bot can send no more (a stdio bot closed its stdout); the
    message says so in the arena's words, for the verdict's detail."""


def describe_exit(code: int) -> str:
    if code < 0:
        import signal

        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class SeatStreams:
    """The runner's plumbing to and from the two seats' streams (one asyncio loop).

    It reads the spec (the Log limits), the engine's match (where a Log line falls), the seats, the
    bots' handles (exit status), the recorder (Log lines), posts to the runner's queue, and ends the
    match through `fail` (the runner's verdict, which raises); the runner reads back `stalled`."""

    def __init__(
        self,
        spec: MatchSpec,
        match: Match,
        seats: list[Seat],
        handles: list[BotHandle | None],
        recorder: Recorder,
        queue: EventQueue,
        fail: Callable[[int, str, str], NoReturn],
    ) -> None:
        self.spec, self.match, self.seats, self.handles = spec, match, seats, handles
        self.recorder, self.queue, self.fail = recorder, queue, fail
        self.writing: tuple[int, float] | None = None  # (seat, since) while a write is in progress
        self.stalled: int | None = None  # the seat whose write the watchdog gave up on

    def attach(self, seat: Seat, context: Any, join: pb.Join) -> None:
        seat.context = context
        seat.joined = True
        seat.self_name = join.bot_name[:64]  # private: the seat keeps its registered name (match.py)
        self.queue.post(Event(JOINED, seat.index))

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
            self.queue.post(Event(GONE, seat.index, "dropped its connection"))

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
        queue = self.queue
        while True:
            try:
                msg = await context.read()  # the deserializer never raises (server._parse_bot_message)
            except asyncio.CancelledError:
                raise
            except StreamEnded as exc:
                self.queue.post(Event(GONE, idx, str(exc)))
                return
            except Exception as exc:  # gRPC itself failed the read: the stream is gone
                self.queue.post(Event(GONE, idx, f"broke its stream ({type(exc).__name__})"))
                return
            t = time.perf_counter()
            ended = not isinstance(msg, _MESSAGES)  # grpc.aio.EOF, without importing gRPC
            if ended:  # the bot half-closed its call
                seat.half_closed = True
                self.queue.post(Event(GONE, idx, "closed its stream"))
                return
            kind = msg.WhichOneof("msg")
            if kind == "action":
                action = msg.action
                event = Event(ACTION, idx, "", action.turn_id, action.card, t)
                waiter = queue.waiter  # queue.post(event), inlined: every move comes this way
                if waiter is not None and not waiter.done():
                    waiter.set_result(event)
                else:
                    queue.events.append(event)
            elif kind == "log":
                self._log(seat, msg.log.text)
            else:
                reason = getattr(msg, "reason", None)  # server.BadBotMessage: the referee's own words
                seat.bad_reason = (
                    f"sent {reason}" if reason
                    else "sent a second Join on its stream" if kind == "join"
                    else "sent an empty BotMessage (no join, action or log set)"
                )  # fmt: skip
                self.queue.post(Event(BAD, idx, seat.bad_reason))
                return

    def _log(self, seat: Seat, text: str) -> None:
        limits = self.spec.log_limits
        if not seat.admit_log(limits):
            if seat.logs_dropped == 1:  # the first drop: the runner tells the bot, once
                self.queue.post(Event(LOG_DROPPED, seat.index))
            return
        text, cut = cap_text(text, limits.max_line_bytes)
        seat.logs_truncated += cut
        deal = self.match.deal
        self.recorder.log(
            seat.index, 0 if deal is None else deal.index + 1, 0 if deal is None else deal.trick_no, text
        )

    def log_dropped(self, seat: Seat) -> pb.RefereeMessage:
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

    async def classify_gone(self, i: int, reason: str) -> tuple[str, str]:
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
        while self.exited(i) is None and time.perf_counter() < loop_end and not seat.bad_reason:
            await asyncio.sleep(0.02)
        if seat.bad_reason:
            return V.PROTOCOL_ERROR, seat.bad_reason
        code = self.exited(i)
        if code is None:
            return V.DISCONNECT, f"the bot {reason} while its process kept running"
        return V.CRASH, f"the bot's process died ({describe_exit(code)}); the bot {reason}"

    async def drain(self) -> None:
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

    def pause(self, i: int) -> None:
        """Stop seat i's process while it is not on move (MatchRunner's `pause_idle`)."""
        h = self.handles[i]
        if h is not None:
            h.pause()

    def resume(self, i: int) -> None:
        h = self.handles[i]
        if h is not None:
            h.resume()

    def exited(self, i: int) -> int | None:
        h = self.handles[i]
        return None if h is None else h.exit_status()

    async def send(
        self, i: int, msg: pb.RefereeMessage, timeout: float | None = None, final: bool = False
    ) -> None:
        """Write to a seat. A write that does not complete (the bot stopped reading its stream) ends
        the seat with TIMEOUT: after `timeout` if given, else when the watchdog sees it stalled."""
        seat = self.seats[i]
        if seat.context is None or seat.gone:
            return
        try:
            if timeout is None:
                self.writing = (i, time.perf_counter())
                await seat.context.write(msg)
                self.writing = None
            else:
                async with asyncio.timeout(timeout):
                    await seat.context.write(msg)
        except TimeoutError:
            seat.gone = True
            if not final:
                self.fail(i, V.TIMEOUT, f"did not read its messages for {timeout:.3g} s")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.writing = None
            if final:
                seat.gone = True
                return
            verdict, why = await self.classify_gone(i, f"could not be written to ({type(exc).__name__})")
            self.fail(i, verdict, why)

    async def watchdog(self, task: asyncio.Task) -> None:
        """Cancel the runner when a write has been stuck for WRITE_STALL seconds."""
        while True:
            await asyncio.sleep(min(1.0, WRITE_STALL / 4))
            w = self.writing
            if w is not None and time.perf_counter() - w[1] > WRITE_STALL:
                self.stalled = w[0]
                task.cancel()
                return
