"""One seat of one match (its token, its stream, its counters and its Log limiter), and the queue of
events the stream handlers post to the match's runner."""

from __future__ import annotations

import asyncio
import collections
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from arena.proto import referee_pb2 as pb


@dataclass(frozen=True)
class LogLimits:
    """Caps on a bot's Log lines: per-line size, per-match count, and a token-bucket rate."""

    max_line_bytes: int = 1024
    max_lines: int = 2000
    lines_per_second: int = 50
    burst: int = 200

    def to_proto(self) -> pb.LogLimits:
        return pb.LogLimits(
            max_line_bytes=self.max_line_bytes, max_lines=self.max_lines,
            lines_per_second=self.lines_per_second, burst=self.burst,
        )  # fmt: skip


# Event kinds the stream handlers post to a match.
JOINED = "joined"
ACTION = "action"
GONE = "gone"  # the stream ended or was cancelled
BAD = "bad"  # a protocol violation on an established stream
SHUTDOWN = "shutdown"
LOG_DROPPED = "log_dropped"  # the seat's first dropped Log line: the runner sends it Error LOG_DROPPED


@dataclass(slots=True)
class Event:
    kind: str
    seat: int = -1
    detail: str = ""
    turn_id: int = 0
    card: str = ""
    t: float = 0.0  # perf_counter() when the message arrived


class EventQueue:
    """A match's one queue: the stream handlers post, the runner waits with `next`. This is on every
    move's path, so a wait is a bare future (no asyncio.Queue or asyncio.timeout()), and one timer,
    re-armed when it fires early, serves many waits."""

    def __init__(self) -> None:
        self.events: collections.deque[Event] = collections.deque()
        self.waiter: asyncio.Future[Event | None] | None = None  # the runner waiting in next()
        self._deadline = 0.0  # when that wait ends (time.perf_counter())
        self._timer: asyncio.TimerHandle | None = None  # fires at _timer_at, at or before _deadline
        self._timer_at = 0.0

    def post(self, event: Event) -> None:
        """Hand an event to the runner (from the stream handlers, on the same loop)."""
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(event)
        else:
            self.events.append(event)

    async def next(self, timeout: float) -> Event | None:
        """The next event, or None after `timeout` seconds."""
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
        waiter = self.waiter = loop.create_future()
        try:
            return await waiter
        finally:
            self.waiter = None

    def _tick(self) -> None:
        """The wait timer fired: end the wait if its deadline has passed, else sleep again until it.
        Each move's deadline is later than the last one's when the clocks are alike, so one timer
        serves many moves instead of one set and cancelled per move."""
        self._timer = None
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        left = self._deadline - time.perf_counter()
        if left > 0:
            self._timer = asyncio.get_running_loop().call_later(left, self._tick)
            self._timer_at = self._deadline
        else:
            waiter.set_result(None)

    def stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


@dataclass
class Seat:
    index: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    claimed: bool = False
    joined: bool = False
    gone: bool = False  # its stream cannot be written any more (cancelled, or a write failed)
    half_closed: bool = False  # it closed its sending side; the referee can still write to it
    welcomed: bool = False  # its Welcome was sent (a seat that joined always gets one, see _finish)
    name: str = ""  # registered (MatchSpec.names), or "remote"
    version: str = ""
    self_name: str = ""  # what its Join said (private: PlayerRecord.self_reported_name)
    context: Any = None  # the grpc.aio ServicerContext of its stream
    receive_cap: int = 0  # gRPC's receive limit on the port it joined through (bytes), for details
    join_error: str = ""  # why its last Join attempt was refused, for STARTUP_FAILED details
    bad_reason: str = ""  # set when its stream broke the protocol (wins over a later write error)
    stale: int = 0
    logs_kept: int = 0
    logs_dropped: int = 0
    logs_truncated: int = 0
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    reader_done: asyncio.Event = field(default_factory=asyncio.Event)  # its stream's reader has ended
    # the gRPC status its call ends with once the match is over: (grpc.StatusCode name, details)
    end_status: tuple[str, str] | None = None
    _tokens: float = -1.0
    _refill_at: float = 0.0

    def admit_log(self, limits: LogLimits) -> bool:
        """Token bucket plus a per-match total; counts what it drops."""
        now = time.monotonic()
        if self._tokens < 0:
            self._tokens, self._refill_at = float(limits.burst), now
        self._tokens = min(
            float(limits.burst), self._tokens + (now - self._refill_at) * limits.lines_per_second
        )
        self._refill_at = now
        if self.logs_kept >= limits.max_lines or self._tokens < 1:
            self.logs_dropped += 1
            return False
        self._tokens -= 1
        self.logs_kept += 1
        return True


def cap_text(text: str, max_bytes: int) -> tuple[str, bool]:
    """Cut `text` to at most `max_bytes` of UTF-8 without splitting a character."""
    raw = text.encode("utf-8")
    if len(raw) <= max_bytes:
        return text, False
    return raw[:max_bytes].decode("utf-8", errors="ignore"), True
