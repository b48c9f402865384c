"""`arena bench referee`: the referee's per-move round trip against a bare gRPC ping-pong.

Both are measured in the same run, in the same process, over the same kind of Unix socket, with the
same bot program (trivial_bot/: the SDK, first legal card), launched the same way (LocalLauncher):

- referee: two trivial bots play matches of `deals` deals; per move = the wall time from the
  first Welcome to the MatchResult divided by the number of cards played. It includes everything
  the referee does: engine, views, TrickResults to both seats, clocks.
- baseline: one trivial bot plays ping-pong with a bare echo servicer: its Join and every Action
  are answered with the same TurnRequest of the referee's average size, and after as many round
  trips as a match has moves, a MatchResult; per round trip = the wall time from the Join to the
  MatchResult divided by the round trips. The bot does exactly what it does in a match per message.

Fairness: one unmeasured warm-up round of each first; then rounds in ABBA order (baseline first in
even rounds, the referee first in odd ones), so that a load trend does not favour either side; the
echo server has the options of a bot's socket (arena/referee/botsocket.py); both CPU figures are the loop thread's over the same
window. The referee's per-move figure honestly includes what a match adds to its moves: the
DealResult to both seats (2 more writes per 32 moves) and the second seat's Welcome and MatchResult.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import grpc

from arena.engine import Match, Rules
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.referee import TimeControl, convert
from arena.referee.loop import run_sync

TARGET = 1.25  # the referee may add at most 25% over the bare round trip
TRIVIAL_BOT = Path(__file__).resolve().parent / "trivial_bot"


def typical_turn_request(rules: Rules, seed: int = 7) -> pb.TurnRequest:
    """A TurnRequest of the average serialized size over one deal played with first-legal moves,
    built as the referee builds them (with the trick result it carries)."""
    m = Match(rules, seed)
    deal = m.start_deal()
    requests: list[pb.TurnRequest] = []
    last = None
    while not deal.done:
        seat = deal.to_move
        assert seat is not None  # the deal is not done
        view = m.view(seat)
        req = pb.TurnRequest(turn_id=len(requests) + 1, legal_cards=convert.codes(view.legal), move_ms=1000,
                             bank_ms=10000, deadline_ms=11000)  # fmt: skip
        convert.fill_view(req.view, view, 0)
        if last is not None:
            convert.fill_trick_result(req.trick_result, m, last, seat)
        requests.append(req)
        last = m.play(view.legal[0]) or last
    sizes = [r.ByteSize() for r in requests]
    mean = statistics.mean(sizes)
    return min(requests, key=lambda r: abs(r.ByteSize() - mean))


class _Echo(pbg.RefereeServicer):
    """The bare server: answer the Join and every Action with the template TurnRequest, nothing else;
    after `rounds` round trips, a MatchResult (which ends the bot's run())."""

    def __init__(self, template: pb.TurnRequest, rounds: int) -> None:
        self.template = template
        self.rounds = rounds
        self.per_round: list[tuple[float, float]] = []  # (wall s, loop-thread CPU s) per round trip
        self.done = asyncio.Event()

    async def Play(self, request_iterator, context):
        reply = pb.RefereeMessage(turn_request=self.template)
        try:
            if await context.read() is grpc.aio.EOF:  # the Join
                return
            t0, c0 = time.perf_counter(), time.thread_time()
            for n in range(1, self.rounds + 1):
                reply.turn_request.turn_id = n
                await context.write(reply)
                if await context.read() is grpc.aio.EOF:
                    return
            t1, c1 = time.perf_counter(), time.thread_time()
            self.per_round.append(((t1 - t0) / self.rounds, (c1 - c0) / self.rounds))
            # measured before the MatchResult: the bot exits on reading it, and may be gone (the write
            # cancelled) before this side hears that the write finished
            await context.write(pb.RefereeMessage(match_result=pb.MatchResult(verdicts=["OK", "OK"])))
        finally:
            self.done.set()


async def _baseline(rounds: int, template: pb.TurnRequest, tmp: Path) -> tuple[float, float]:
    from arena.referee.botsocket import BOT_SOCKET_OPTIONS, SEAT_RPCS
    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.launcher import LaunchSpec

    sock = tmp / "echo.sock"
    # the options and call limit of a bot's socket (botsocket.py), which is what the referee's bots use
    server = grpc.aio.server(options=list(BOT_SOCKET_OPTIONS), maximum_concurrent_rpcs=SEAT_RPCS)
    echo = _Echo(template, rounds)
    pbg.add_RefereeServicer_to_server(echo, server)
    server.add_insecure_port(f"unix://{sock}")
    await server.start()
    loop = asyncio.get_running_loop()
    spec = LaunchSpec(
        bundle=load_bundle(TRIVIAL_BOT), socket_path=sock, env={"ARENA_TOKEN": "bench"}, label="bench-echo"
    )
    bot = await loop.run_in_executor(
        None, _local_launcher().launch, spec
    )  # from a thread, as play_match does
    try:
        async with asyncio.timeout(60):
            await echo.done.wait()
    finally:
        await loop.run_in_executor(None, bot.kill)
        await server.stop(0.5)
    if not echo.per_round:
        raise RuntimeError(f"the ping-pong bot did not complete; its output:\n{bot.output_tail(12)}")
    return echo.per_round[-1]


def _local_launcher():
    from arena.sandbox.local import LocalLauncher

    with (
        warnings.catch_warnings()
    ):  # plain processes are the point here: the bench measures gRPC, not isolation
        warnings.simplefilter("ignore")
        return LocalLauncher(warn=False)


def _referee_round(deals: int, seed: int) -> tuple[float, float, int]:
    """One match of two trivial bots: (wall s per move, referee loop CPU s per move, moves)."""
    from arena.sandbox.bundle import load_bundle
    from arena.workers.match import play_match

    marks: dict[str, tuple[float, float]] = {}

    def on_event(ev: dict) -> None:  # runs on the referee loop's thread
        if ev["event"] in ("started", "match_end"):
            marks[ev["event"]] = (time.perf_counter(), time.thread_time())

    launcher = _local_launcher()
    bot = load_bundle(TRIVIAL_BOT)
    out = play_match(
        (bot, bot), rules=Rules(max_deals=deals), seed=seed, time_control=TimeControl(startup=30, move=5, bank=30),
        launcher=launcher, on_event=on_event,
    )  # fmt: skip
    if out.verdicts != ("OK", "OK"):
        raise RuntimeError(f"the bench match failed: {out.verdicts} {out.verdict_details}")
    moves = sum(len(d.plays) for d in out.record.deals)
    (w0, c0), (w1, c1) = marks["started"], marks["match_end"]
    return (w1 - w0) / moves, (c1 - c0) / moves, moves


def run(rounds: int = 11, deals: int = 10, progress: Callable[[float], None] | None = None) -> dict:
    """Alternate baseline and referee rounds; medians, their ratio, and every round's figures."""
    template = typical_turn_request(Rules())
    rows = []
    moves = 0
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        run_sync(_baseline(32, template, Path(tmp)))  # warm-up, not measured
        _referee_round(1, seed=999)
        for i in range(rounds):
            if i % 2 == 0:
                base_wall, base_cpu = run_sync(_baseline(deals * 32, template, Path(tmp)))
                ref_wall, ref_cpu, moves = _referee_round(deals, seed=1000 + i)
            else:
                ref_wall, ref_cpu, moves = _referee_round(deals, seed=1000 + i)
                base_wall, base_cpu = run_sync(_baseline(deals * 32, template, Path(tmp)))
            rows.append({"baseline_ms": round(base_wall * 1000, 3), "referee_ms": round(ref_wall * 1000, 3),
                         "ratio": round(ref_wall / base_wall, 3),
                         "baseline_cpu_us": round(base_cpu * 1e6), "referee_cpu_us": round(ref_cpu * 1e6)})  # fmt: skip
            if progress is not None:
                progress((i + 1) / rounds)
    base = statistics.median(r["baseline_ms"] for r in rows)
    ref = statistics.median(r["referee_ms"] for r in rows)
    paired = sorted(r["ratio"] for r in rows)
    quartiles = statistics.quantiles(paired, n=4) if len(paired) > 1 else [paired[0]] * 3
    base_cpu = statistics.median(r["baseline_cpu_us"] for r in rows)
    ref_cpu = statistics.median(r["referee_cpu_us"] for r in rows)
    return {
        "baseline_ms_per_round_trip": round(base, 3),
        "referee_ms_per_move": round(ref, 3),
        "ratio": round(ref / base, 3),
        "median_paired_ratio": round(statistics.median(paired), 3),
        # when this range straddles the target, the verdict is machine noise as much as the referee
        "paired_ratio_quartiles": [round(quartiles[0], 3), round(quartiles[2], 3)],
        "best_ratio": round(min(r["referee_ms"] for r in rows) / min(r["baseline_ms"] for r in rows), 3),
        "target_ratio": TARGET,
        "met": ref / base <= TARGET,
        "baseline_cpu_us_per_round_trip": round(base_cpu),
        "referee_cpu_us_per_move": round(ref_cpu),
        # the steadier figure: what the referee's loop spends per move beyond the bare echo's work
        "referee_extra_cpu_us_per_move": round(ref_cpu - base_cpu),
        "moves_per_round": moves,
        "turn_request_bytes": template.ByteSize(),
        "rounds": rows,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
