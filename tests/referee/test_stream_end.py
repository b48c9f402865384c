"""The order of a seat's last two reports is decided by the code, not by who runs first: a protocol
violation the bot sent before its call ended reaches the runner ahead of the stream's end.

Under load, the gRPC core can hand the referee a message after it has told the referee that the call
was cancelled. The test forces that order at the exact point: the seat's stream gives its reader the
bad message only once the referee has marked the seat gone. Before the fix, the handler cancelled
the reader there (the message was lost) and the runner judged the seat after a 10 ms sleep: the
verdict was DISCONNECT."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from conformance import start
from wire import Wire, in_thread, play_out

from arena.referee.server import BadBotMessage
from arena.referee.session import Seat

GARBAGE = b"\xff\xff\xff\xff\x0f\x01"  # 6 bytes that do not parse as a BotMessage
HOLD_LIMIT = 2000  # polls of 5 ms: the test gives up holding after 10 s (the referee never saw the end)


@pytest.fixture
def addr(referee):
    return referee.address("unix")


class LateStream:
    """A seat's real stream whose reader gets a bad message only after the referee has marked the
    seat gone (its call cancelled): the order a loaded machine can produce."""

    def __init__(self, context: Any, seat: Seat, held: threading.Event) -> None:
        self._context, self._seat, self._held = context, seat, held

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    async def read(self) -> Any:
        msg = await self._context.read()
        if isinstance(msg, BadBotMessage):
            self._held.set()  # the client may cancel its call now
            for _ in range(HOLD_LIMIT):
                if self._seat.gone:
                    break
                await asyncio.sleep(0.005)
        return msg


def test_a_violation_read_after_the_call_was_cancelled_is_still_a_protocol_error(referee, addr):
    runner = start(referee)
    seat = runner.seats[0]
    held = threading.Event()
    read_loop = runner.streams.read_loop

    async def late_reader(s: Seat, context: Any) -> None:
        await read_loop(s, LateStream(context, seat, held) if s is seat else context)

    runner.streams.read_loop = late_reader  # type: ignore[method-assign]  # the servicer starts each reader here
    a, b = Wire(addr), Wire(addr)
    a.join(runner.tokens[0])
    b.join(runner.tokens[1])
    tb = in_thread(play_out, b)
    a.until("welcome")
    a.send(GARBAGE)
    assert held.wait(30), "the referee never read the bad message"
    a.channel.close()  # cancels the call at once
    result = referee.wait(runner)
    tb.join(30)
    assert seat.gone
    assert (result.verdicts[0], result.details[0].split(" (")[0]) == (
        "PROTOCOL_ERROR",
        "sent 6 bytes that do not parse as a BotMessage",
    ), list(result.details)
    assert result.verdicts[1] == "OK" and result.winner == 1
