"""`arena bench stdio`: what one move of a stdio bot costs the referee's process, by how its seat is
served (docs/sandbox.md "stdio bots").

- in-process: the referee's stdio seat (`arena.referee.stdio_seat`) writes the TurnRequest's line to
  the bot's stdin and reads its answer from its stdout, translated by `arena.proto.lines`;
- through a socket (the baseline, the design not taken): the same seat as a gRPC client in the same
  process, joined to a gRPC server on a Unix socket as any bot joins, so every move also crosses a
  stream whose both ends are the referee's;
- the translation alone (`referee_line` and `raw_bot_message`), with no I/O.

The bot is the same small Python echo program on the pipes for both (its own CPU is not counted:
only this process's, `time.process_time`). Rounds alternate the two, so drifting load hits both.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

ECHO = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    print(json.dumps({'card': json.loads(line)['legal_cards'][0]}), flush=True)\n"
)
WARMUP = 50


def _request(turn: int) -> Any:
    from arena.proto import referee_pb2 as pb

    view = pb.View(
        seat=0, deal_number=1, trick_number=3, phase=1, hand=["9C", "QC", "7D", "TH", "KS", "AS"],
        lead_card="JH", honours=[1, 0], stock_size=16, opponent_hand_size=5, lines=[0, 0], flags=[0, 0],
        tricks=[pb.Trick(number=1, leader=0, lead_card="8S", follow_card="KD", winner=0, honours=1)],
    )  # fmt: skip
    return pb.RefereeMessage(
        turn_request=pb.TurnRequest(
            turn_id=turn, view=view, legal_cards=["9C", "QC"], move_ms=1000, bank_ms=10000, deadline_ms=11000
        )
    )


async def _echo_seat() -> tuple[Any, subprocess.Popen[bytes]]:
    from arena.referee import stdio_seat

    bot = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert bot.stdin is not None and bot.stdout is not None
    return await stdio_seat.open_context(bot.stdin, bot.stdout), bot


async def _in_process(turns: int) -> float:
    context, bot = await _echo_seat()
    try:
        for i in range(WARMUP + turns):
            if i == WARMUP:
                start = time.process_time()
            await context.write(_request(i))
            await context.read()
        return (time.process_time() - start) / turns
    finally:
        context.close()
        bot.kill()
        bot.wait()


async def _through_socket(turns: int) -> float:
    import grpc

    from arena.proto import referee_pb2_grpc as pb_grpc

    class Referee(pb_grpc.RefereeServicer):
        async def Play(self, requests: Any, call: Any) -> None:  # gRPC's name
            for i in range(WARMUP + turns):
                await call.write(_request(i))
                await call.read()

    with tempfile.TemporaryDirectory(prefix="arena-bench-stdio-") as tmp:
        address = f"unix://{tmp}/referee.sock"
        server = grpc.aio.server()
        pb_grpc.add_RefereeServicer_to_server(Referee(), server)
        server.add_insecure_port(address)
        await server.start()
        context, bot = await _echo_seat()
        answers: asyncio.Queue[Any] = asyncio.Queue()

        async def outgoing() -> AsyncIterator[Any]:
            while (answer := await answers.get()) is not None:
                yield answer

        channel = grpc.aio.insecure_channel(address)
        stream = None
        try:
            stream = pb_grpc.RefereeStub(channel).Play(outgoing())
            for i in range(WARMUP + turns):
                if i == WARMUP:
                    start = time.process_time()
                await context.write(await stream.read())
                answers.put_nowait(await context.read())
            return (time.process_time() - start) / turns
        finally:
            answers.put_nowait(None)  # the client half-closes; the server's handler has ended
            context.close()
            bot.kill()
            bot.wait()
            if stream is not None:
                await stream.code()  # the server's handler ends the call after its last read
            await channel.close()
            await server.stop(None)


def _translation(turns: int) -> float:
    from arena.proto.lines import raw_bot_message, referee_line

    messages = [_request(i) for i in range(turns)]
    start = time.process_time()
    for message in messages:
        referee_line(message)
        raw_bot_message(b'{"card":"9C"}\n', 1)
    return (time.process_time() - start) / turns


def run(
    turns: int = 2000, rounds: int = 3, progress: Callable[[float], None] = lambda f: None
) -> dict[str, Any]:
    """Medians over `rounds`, alternated, of the referee process's CPU per move (microseconds)."""
    from arena.referee.loop import run_sync

    samples: dict[str, list[float]] = {"in_process_us": [], "socket_us": []}
    for r in range(rounds):
        order = [("in_process_us", _in_process), ("socket_us", _through_socket)]
        for key, measure in order if r % 2 == 0 else order[::-1]:
            samples[key].append(1e6 * run_sync(measure(turns)))
        progress((r + 1) / rounds)
    result: dict[str, Any] = {
        "turns": turns,
        "rounds": rounds,
        "translation_us": round(1e6 * _translation(turns), 1),
    }
    for key, values in samples.items():
        result[key] = round(statistics.median(values), 1)
        result[key.replace("_us", "_runs_us")] = [round(v, 1) for v in values]
    result["socket_vs_in_process"] = round(result["socket_us"] / result["in_process_us"], 2)
    result["loadavg"] = round(os.getloadavg()[0], 1)
    return result
