"""A stdio bot's seat, served in the referee's own process: the JSON lines of docs/stdio.md on the
bot's stdin and stdout pipes, with no Python bridge process and no gRPC in between.

The bwrap and local launchers start a `protocol = "stdio"` bot's `run` with a stdin pipe and a stdout
pipe kept for the protocol (its stderr is its log, as any bot's output). `serve` claims the seat at
once, as the bridge joined at once without waiting for the bot, and hands the runner's `SeatStreams`
a context with the two calls it makes of a gRPC stream, `read()` and `write()`, so everything after
the Join (clocks, stale turns, Log limits, verdicts) is the referee's one implementation. The lines
are translated by `arena.proto.lines`, which the bridge uses too.

Hostile input is normal input. What a bot writes is read in chunks into a buffer of at most
`READ_BUFFER` bytes; past it the pipe is not read until the referee has taken lines out, so a
flooding bot blocks on its own full pipe. Lines are taken at most `LINES_PER_SECOND` a second after
a burst of `LINES_BURST` (a bot needs one line a move and its Logs, themselves capped at 50 a second),
so a flood costs the referee a bounded CPU. A line longer than MAX_LINE is cut and is a bad card.
What the referee writes is buffered up to `WRITE_BUFFER` bytes beyond the pipe; a bot that stops
reading then stalls the write, which the watchdog ends as TIMEOUT (streams.WRITE_STALL), as for a
gRPC bot that stops reading its stream. The clock runs meanwhile: nothing here waits for the bot.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import IO, cast

from arena.proto import referee_pb2 as pb
from arena.proto.lines import MAX_LINE, raw_bot_message, referee_line
from arena.proto.protocol import PROTOCOL_VERSION
from arena.referee.claims import check_claim
from arena.referee.match import MatchRunner
from arena.referee.streams import StreamEnded

READ_BUFFER = 64 * 1024  # bytes of the bot's output held before its pipe is left unread
WRITE_BUFFER = 64 * 1024  # bytes of lines for the bot held beyond its full stdin pipe
LINES_BURST = 1000  # lines taken at once before the rate applies
LINES_PER_SECOND = 1000.0


class _Waiting:
    """One waiter at a time, woken by the pipe's callbacks (both sides of a pipe need this)."""

    _waiter: asyncio.Future[None] | None = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait(self) -> None:
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None


class _Output(_Waiting, asyncio.Protocol):
    """The bot's stdout: a bounded buffer the reader takes lines from."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.eof = False
        self.transport: asyncio.ReadTransport | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.ReadTransport, transport)  # uvloop's are not asyncio's classes

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > READ_BUFFER and not self._paused and self.transport is not None:
            self.transport.pause_reading()
            self._paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self._wake()

    async def line(self) -> bytes | None:
        """The next line, as the bridge's readline(MAX_LINE + 1) gives it; None at the end."""
        while True:
            end = self.buf.find(b"\n", 0, MAX_LINE + 1)
            if end >= 0 or len(self.buf) > MAX_LINE or (self.eof and self.buf):
                size = end + 1 if end >= 0 else min(len(self.buf), MAX_LINE + 1)
                raw = bytes(self.buf[:size])
                del self.buf[:size]
                if self._paused and len(self.buf) <= READ_BUFFER // 2 and self.transport is not None:
                    self._paused = False
                    self.transport.resume_reading()
                return raw
            if self.eof:
                return None
            await self._wait()


class _Input(_Waiting, asyncio.BaseProtocol):
    """The bot's stdin: flow control, so the referee's buffer for it stays bounded."""

    def __init__(self) -> None:
        self.lost = False
        self._paused = False

    def pause_writing(self) -> None:
        self._paused = True

    def resume_writing(self) -> None:
        self._paused = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self._wake()

    async def drain(self) -> None:
        while self._paused and not self.lost:
            await self._wait()


class StdioContext:
    """What `SeatStreams` uses of a gRPC stream (`read`, `write`), over a stdio bot's pipes."""

    def __init__(
        self,
        output: _Output,
        stdin: asyncio.WriteTransport,
        stdin_state: _Input,
        stdout: asyncio.ReadTransport,
    ) -> None:
        self._output, self._stdin, self._stdin_state, self._stdout = output, stdin, stdin_state, stdout
        self.turn = 0  # the latest TurnRequest's id: a line without one answers it (docs/stdio.md)
        self._tokens = float(LINES_BURST)
        self._refill_at = time.monotonic()

    async def read(self) -> pb.BotMessage:
        raw = await self._output.line()
        if raw is None:
            raise StreamEnded("closed its stdout")
        await self._admit()
        return raw_bot_message(raw, self.turn)

    async def first_line(self) -> bytes | None:
        """The first line on the pipe, before the bot's own: the launch chain's (None at its end)."""
        return await self._output.line()

    async def _admit(self) -> None:
        """One token per line; without one, wait for it (the bot's pipe fills meanwhile)."""
        now = time.monotonic()
        self._tokens = min(float(LINES_BURST), self._tokens + (now - self._refill_at) * LINES_PER_SECOND)
        self._refill_at = now
        if self._tokens < 1:
            await asyncio.sleep((1 - self._tokens) / LINES_PER_SECOND)
            self._tokens, self._refill_at = 1.0, time.monotonic()
        self._tokens -= 1

    async def write(self, message: pb.RefereeMessage) -> None:
        """One line to the bot's stdin; after the MatchResult its stdin is closed, its cue to exit."""
        if self._stdin_state.lost or self._stdin.is_closing():
            raise BrokenPipeError("the bot's stdin is closed")
        kind = message.WhichOneof("msg")
        if kind == "turn_request":
            self.turn = message.turn_request.turn_id
        self._stdin.write(referee_line(message).encode())
        if kind == "match_result":
            self._stdin.close()  # after what is buffered has been written
            return
        await self._stdin_state.drain()
        if self._stdin_state.lost:
            raise BrokenPipeError("the bot's stdin is closed")

    def close(self) -> None:
        self._stdin.close()
        self._stdout.close()


class _PipeEnd:
    """One of a bot's pipes as handed to the loop, which owns its fd from then on.

    uvloop closes a pipe's fd itself (in libuv) and then calls `close()` of the object it was given;
    a file object would close that fd number a second time, when another thread may already have
    got it for something else (CI saw the next seat's fresh stdin pipe closed under it). So the file
    object gives its fd up here, and `close()` closes it only on a loop that closes through it."""

    def __init__(self, file: IO[bytes], loop: asyncio.AbstractEventLoop) -> None:
        self._fd = os.dup(file.fileno())
        file.close()
        self._closes = type(loop).__module__.partition(".")[0] != "uvloop"

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        if self._closes and self._fd >= 0:
            os.close(self._fd)
        self._fd = -1


async def open_context(stdin: IO[bytes], stdout: IO[bytes]) -> StdioContext:
    """Connect the bot's pipes to the running loop (which owns them from now on)."""
    loop = asyncio.get_running_loop()
    output = _Output()
    read_transport, _ = await loop.connect_read_pipe(lambda: output, _PipeEnd(stdout, loop))
    state = _Input()
    write_transport, _ = await loop.connect_write_pipe(lambda: state, _PipeEnd(stdin, loop))
    write_transport.set_write_buffer_limits(high=WRITE_BUFFER)
    return StdioContext(output, write_transport, state, read_transport)


async def serve(
    runner: MatchRunner,
    seat_index: int,
    context: StdioContext,
    name: str,
    version: str,
    started: bytes | None,
) -> None:
    """Seat `seat_index` of `runner`, played by the stdio bot behind `context`, until its match is
    over: joined once the launch chain wrote `started`, its line for "the sandbox is up, the bot's
    program starts now" (at once when None; the arena launched the bot, so no token is needed), then
    read by the runner's own `read_loop`, as a gRPC stream's handler does (server.RefereeServicer).
    Without that line the seat is never joined: the runner rules STARTUP_FAILED, as for a gRPC bot
    that never sent its Join."""
    seat = runner.seats[seat_index]
    try:
        if started is not None and await context.first_line() != started:
            return  # the pipe ended first: the sandbox never ran the bot
        check_claim(runner, seat)
        seat.claimed = True
        join = pb.Join(bot_name=name[:64], bot_version=version[:64], protocol_version=PROTOCOL_VERSION)
        runner.streams.attach(seat, context, join)
        reader = asyncio.ensure_future(runner.streams.read_loop(seat, context))
        try:
            await seat.finished.wait()
        finally:
            reader.cancel()
    finally:
        context.close()
