"""`arena bench referee`: the referee's per-move round trip against a bare gRPC ping-pong.

Both are measured in the same run, in the same process, over the same kind of Unix socket, with
bot processes written alike (sync gRPC client, request queue):

- referee: two trivial bots (the `random` sample bot) play matches of `deals` deals; per move =
  the wall time from the first Welcome to the MatchResult divided by the number of cards played.
  It includes everything the referee does: engine, views, TrickResults to both seats, clocks.
- baseline: one client process does ping-pong with a bare echo servicer; the reply is a
  TurnRequest of the referee's average size and the request an Action, as in a match.

Rounds alternate (baseline, referee, baseline, ...) so that machine noise hits both alike.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from arena.engine import Match, Rules
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.referee import TimeControl
from arena.referee import convert
from arena.referee.loop import run_sync

REPO = Path(__file__).resolve().parents[2]
TRIVIAL_BOT = REPO / "sample_bots" / "python" / "random"


@dataclass
class BenchResult:
    referee_ms: list[float]
    baseline_ms: list[float]
    moves: int
    request_bytes: int

    @property
    def ratio(self) -> float:
        return statistics.median(self.referee_ms) / statistics.median(self.baseline_ms)


def typical_turn_request(rules: Rules, seed: int = 7) -> pb.TurnRequest:
    """A TurnRequest of the average serialized size over one deal played with first-legal moves."""
    m = Match(rules, seed)
    deal = m.start_deal()
    requests = []
    tid = 0
    while not deal.done:
        seat = deal.to_move
        view = m.view(seat)
        tid += 1
        requests.append(pb.TurnRequest(turn_id=tid, view=convert.view_to_proto(view, 0),
                                       legal_cards=convert.codes(view.legal), move_ms=1000, bank_ms=10000,
                                       deadline_ms=11000))  # fmt: skip
        m.play(view.legal[0])
    sizes = [r.ByteSize() for r in requests]
    mean = statistics.mean(sizes)
    return min(requests, key=lambda r: abs(r.ByteSize() - mean))


class _Echo(pbg.RefereeServicer):
    def __init__(self, template: pb.TurnRequest) -> None:
        self.template = template
        self.per_round: list[float] = []

    async def Play(self, request_iterator, context):
        reply = pb.RefereeMessage(turn_request=self.template)
        n = 0
        t0 = 0.0
        while True:
            msg = await context.read()
            if msg is grpc.aio.EOF:
                break
            if n == 0:
                t0 = time.perf_counter()
            n += 1
            reply.turn_request.turn_id = n
            await context.write(reply)
        if n > 1:
            self.per_round.append((time.perf_counter() - t0) / (n - 1))


async def _baseline(rounds: int, template: pb.TurnRequest, tmp: Path) -> float:
    sock = tmp / "echo.sock"
    server = grpc.aio.server()
    echo = _Echo(template)
    pbg.add_RefereeServicer_to_server(echo, server)
    server.add_insecure_port(f"unix://{sock}")
    await server.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "arena.bench.pingpong_client", f"unix://{sock}", str(rounds), cwd=str(REPO)
    )
    await proc.wait()
    await server.stop(0.5)
    if not echo.per_round:
        raise RuntimeError("the ping-pong client did not complete")
    return echo.per_round[-1] * 1000


def _referee_round(deals: int, seed: int) -> tuple[float, int]:
    import warnings

    from arena.sandbox.bundle import load_bundle
    from arena.sandbox.local import LocalLauncher
    from arena.workers.match import play_match

    marks: dict[str, float] = {}

    def on_event(ev: dict) -> None:
        if ev["event"] in ("started", "match_end"):
            marks[ev["event"]] = time.perf_counter()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher(warn=False)
    bot = load_bundle(TRIVIAL_BOT)
    out = play_match(
        (bot, bot), rules=Rules(max_deals=deals), seed=seed, time_control=TimeControl(startup=30, move=5, bank=30),
        launcher=launcher, on_event=on_event,
    )  # fmt: skip
    if out.verdicts != ("OK", "OK"):
        raise RuntimeError(f"the bench match failed: {out.verdicts} {out.verdict_details}")
    moves = sum(len(d.plays) for d in out.record.deals)
    return (marks["match_end"] - marks["started"]) / moves * 1000, moves


def run(rounds: int = 5, deals: int = 20) -> BenchResult:
    template = typical_turn_request(Rules())
    ref_ms: list[float] = []
    base_ms: list[float] = []
    moves = 0
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        for i in range(rounds):
            base_ms.append(run_sync(_baseline(deals * 32, template, Path(tmp))))
            ms, moves = _referee_round(deals, seed=1000 + i)
            ref_ms.append(ms)
    return BenchResult(ref_ms, base_ms, moves, template.ByteSize())
