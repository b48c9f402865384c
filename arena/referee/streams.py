"""The seat-stream side of a match: events from the stream handlers, reads, writes, logs, and telling
a crash from a disconnect. `MatchRunner` (match.py) mixes this in and owns the attributes it uses:
`spec`, `seats`, `handles`, `events`, `_waiter`, `_deadline`, `_timer`, `_timer_at`, `_writing`, `_stalled`,
`recorder`, `match`, `pause_idle`, `on_event`, and the verdict method `_fail_now`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc

from arena.proto import referee_pb2 as pb
from arena.referee import verdicts as V
from arena.referee.session import ACTION, BAD, GONE, JOINED, SHUTDOWN, Event, Seat, cap_text

EXIT_GRACE = 1.0  # after a stream drops, how long to wait for the process to exit (CRASH vs DISCONNECT)
# A seat whose stream takes no message for this long stopped reading: TIMEOUT. Read at run time
# (the watchdog polls at a quarter of it, at most every second), so tests may shorten it.
WRITE_STALL = 10.0


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
        """Read one seat's stream until it ends; Logs are handled here, the rest becomes Events."""
        idx = seat.index
        while True:
            try:
                msg = await context.read()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # a message that failed to parse or exceeded the size cap
                # gRPC's or the size cap's words, not the bot's bytes; capped all the same
                seat.bad_reason = f"sent a message the referee could not accept: {str(exc)[:200]}"
                self.post(Event(BAD, idx, seat.bad_reason))
                return
            t = time.perf_counter()
            if msg is grpc.aio.EOF:
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
                seat.bad_reason = (
                    "sent a second Join on its stream" if kind == "join"
                    else "sent an empty BotMessage (no join, action or log set)"
                )  # fmt: skip
                self.post(Event(BAD, idx, seat.bad_reason))
                return

    def _log(self, seat: Seat, text: str) -> None:
        limits = self.spec.log_limits
        if not seat.admit_log(limits):
            return
        text, cut = cap_text(text, limits.max_line_bytes)
        seat.logs_truncated += cut
        deal = self.match.deal
        self.recorder.log(
            seat.index, 0 if deal is None else deal.index + 1, 0 if deal is None else deal.trick_no, text
        )

    async def _classify_gone(self, i: int, reason: str) -> tuple[str, str]:
        seat = self.seats[i]
        seat.gone = True
        await asyncio.sleep(0.01)  # let the seat's reader report a protocol violation first
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
            except Exception:  # a display callback must never break a match
                pass
