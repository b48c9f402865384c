"""A bot's socket serves one bot (arena/referee/botsocket.py), over real gRPC on real Unix sockets with
real bots: a hostile remote bot floods its own socket with calls, raw HTTP/2 streams holding unfinished
large messages, and health/reflection requests, while another match plays in the same process.

The referee runs in this process (its loop thread), so its memory is this process's VmRSS. Move times
are printed, not asserted: they depend on the machine."""

from __future__ import annotations

import dataclasses
import json
import os
import stat
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest
from referee_support import bundle, local_launcher

from arena.engine import Rules
from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.referee import TimeControl
from arena.referee.botsocket import SEAT_CALL_BUDGET, SEAT_CONNECTIONS, SEAT_RPCS, SEAT_STREAMS
from arena.sdk import Bot, run
from arena.workers.match import play_match

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MiB = 1024 * 1024
FLOOD_CONNECTIONS, FLOOD_STREAMS = 20, 10  # 200 raw streams


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


class RssPeak(threading.Thread):
    """Samples this process's RSS every 10 ms; `peak` is the highest since the last reset()."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.stopped = threading.Event()

    def reset(self) -> int:
        self.peak = now = rss_bytes()
        return now

    def run(self) -> None:
        while not self.stopped.wait(0.01):
            self.peak = max(self.peak, rss_bytes())


def _socket_path(address: str) -> Path:
    assert address.startswith("unix://"), address
    return Path(address.removeprefix("unix://"))


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _figures(values: list[int]) -> str:
    if not values:
        return "no moves"
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
    return (
        f"{len(values)} moves, median {statistics.median(values):.0f} us, p90 {p90} us, max {values[-1]} us"
    )


def flood_a_seat(tmp_path: Path, other_deals: int = 600) -> dict:
    """Play the other match, start the flooded one with the hostile client in seat 1, run its phases,
    and return what happened: RSS before and at the peak, each phase's report and time window, both
    outcomes, the socket modes, and the other match's think times per window."""
    # The other match: two real bots, long enough to outlast the flood; its deals are timed here.
    deal_times: dict[int, list[float]] = {}

    def on_event(ev: dict) -> None:
        if ev["event"] in ("deal_start", "deal_end"):
            deal_times.setdefault(ev["deal"], []).append(time.monotonic())

    results: dict[str, object] = {}

    def play_other() -> None:
        results["other"] = play_match(
            (bundle("random"), bundle("random")), rules=Rules(max_deals=other_deals), seed=11,
            time_control=TimeControl(startup=20, move=5, bank=30), launcher=local_launcher(), on_event=on_event,
        )  # fmt: skip

    other = threading.Thread(target=play_other, daemon=True)
    other.start()
    while len(deal_times) < 15 and other.is_alive():
        time.sleep(0.05)

    # The flooded match: seat 0 a real bot, seat 1 the hostile client (a remote seat).
    client: dict[str, object] = {}
    ready = threading.Event()

    def on_ready(addresses, tokens) -> None:  # on the referee loop: only start the process
        path = _socket_path(addresses[1][0])
        client["modes"] = (_mode(path.parent), _mode(path), _mode(_socket_path(addresses[0][0]).parent))
        client["paths"] = (path, _socket_path(addresses[0][0]))
        env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
        client["proc"] = subprocess.Popen(
            [sys.executable, str(HERE / "flood_client.py"), addresses[1][0], str(path), tokens[1], tokens[0],
             str(FLOOD_CONNECTIONS), str(FLOOD_STREAMS), "3"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=(tmp_path / "client.err").open("w"),
            text=True, env=env,
        )  # fmt: skip
        ready.set()

    def play_flooded() -> None:
        results["flooded"] = play_match(
            (dataclasses.replace(bundle("random"), protocol="grpc"), None), rules=Rules(max_deals=2), seed=12,
            time_control=TimeControl(startup=60, move=120, bank=10), launcher=local_launcher(), on_ready=on_ready,
        )  # fmt: skip

    flooded = threading.Thread(target=play_flooded, daemon=True)
    flooded.start()
    assert ready.wait(30)
    proc: subprocess.Popen = client["proc"]  # type: ignore[assignment]
    phases: dict[str, dict] = {}
    windows: dict[str, tuple[float, float]] = {}
    sampler = RssPeak()
    sampler.start()
    try:
        line = proc.stdout.readline().strip()
        assert line == "ready", (line, (tmp_path / "client.err").read_text()[-2000:])
        assert other.is_alive(), "the other match ended before the flood began: give it more deals"
        time.sleep(0.3)
        base = sampler.reset()
        flood_start = time.monotonic()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        mark = flood_start
        while (line := proc.stdout.readline().strip()) != "flood-end":
            assert line, (tmp_path / "client.err").read_text()[-2000:]
            report = json.loads(line)
            name = report.pop("phase")
            phases[name], windows[name] = report, (mark, time.monotonic())
            mark = windows[name][1]
        flood_end = time.monotonic()
        peak = sampler.peak
        assert other.is_alive(), "the other match ended during the flood: give it more deals"
        assert proc.stdout.readline().strip() == "done"
        assert proc.wait(60) == 0
    finally:
        sampler.stopped.set()
        if proc.poll() is None:
            proc.kill()
    flooded.join(60)
    other.join(120)

    outcome = results["other"]
    spans: dict[str, list[int]] = {"before": [], **{name: [] for name in windows}, "after": []}
    for deal in outcome.record.deals:  # type: ignore[attr-defined]
        start, end = deal_times[deal.number][0], deal_times[deal.number][-1]
        if end < flood_start:
            key = "before"
        elif start > flood_end:
            key = "after"
        else:
            inside = [n for n, (a, b) in windows.items() if a <= start and end <= b]
            key = inside[0] if inside else "straddling"
        spans.setdefault(key, []).extend(p.think_us for p in deal.plays)
    return {"base": base, "peak": peak, "phases": phases, "results": results, "spans": spans, **client}


def test_flood_on_a_bot_socket_holds_no_memory_and_spares_the_other_match(tmp_path):
    run_ = flood_a_seat(tmp_path)
    base, peak, phases = run_["base"], run_["peak"], run_["phases"]
    # What the flood got: at most what one seat needs, the rest refused.
    calls, raw, services = (phases[k] for k in ("calls", "raw", "services"))
    print(f"\nRSS: base {base / MiB:.1f} MiB, peak during the flood +{(peak - base) / MiB:.2f} MiB")
    print(f"raw phase: {raw}\nservices phase: {services}")
    assert peak - base < 10 * MiB
    # Raw: one connection slot was free; the others are closed at accept. On it, streams past the HTTP/2
    # limit are reset; every stream within it is refused with RESOURCE_EXHAUSTED (a 4 MiB message by
    # gRPC's size limit, a smaller one by the call limit) but for at most one, which takes the free
    # call slot and holds its unfinished message (under 17 KiB).
    assert raw["connections"] == FLOOD_CONNECTIONS and raw["closed_connections"] == FLOOD_CONNECTIONS - 1
    streams = raw["streams"]
    assert streams.get("closed", 0) == (FLOOD_CONNECTIONS - 1) * FLOOD_STREAMS, streams
    assert sum(n for k, n in streams.items() if k.startswith("rst ")) == FLOOD_STREAMS - SEAT_STREAMS, streams
    assert streams.get("open", 0) <= SEAT_RPCS - 1, streams
    assert streams.get("grpc-status 8", 0) + streams.get("open", 0) == SEAT_STREAMS, streams
    assert services["health"] == "UNIMPLEMENTED" and services["reflection"] == "UNIMPLEMENTED"
    assert (
        services["other_token"] == "PERMISSION_DENIED"
        and "serves seat 1 only" in services["other_token_details"]
    )

    # The 200 calls: the seat's own stream holds one call slot, one silent call may hold the other, the
    # rest are refused with RESOURCE_EXHAUSTED; once the socket's call budget is spent the seat loses,
    # its match ends and its socket goes (UNAVAILABLE).
    print(f"calls: {calls}")
    assert calls["held"] == 0 and "OK" not in calls, calls
    assert calls["RESOURCE_EXHAUSTED"] >= SEAT_STREAMS - 1, calls
    assert sum(n for k, n in calls.items() if not k.endswith("details")) == 200, calls

    # The flooder lost by the call budget; the other match ended normally.
    out_flooded, out_other = run_["results"]["flooded"], run_["results"]["other"]
    assert out_flooded.verdicts == ("OK", "PROTOCOL_ERROR"), out_flooded.verdict_details
    assert f"opened more than {SEAT_CALL_BUDGET} calls on its socket" in out_flooded.verdict_details[1]
    assert out_other.verdicts == ("OK", "OK") and out_other.end_reason == "COMPLETED", (
        out_other.verdict_details
    )

    # The sockets: one private folder per seat, gone with the match.
    seat_dir_mode, sock_mode, other_dir_mode = run_["modes"]
    assert (seat_dir_mode, sock_mode, other_dir_mode) == (0o700, 0o600, 0o700)
    assert not any(p.exists() for p in run_["paths"])

    # The other match's move times before, during each phase of, and after the flood (printed only).
    for key, values in run_["spans"].items():
        print(f"other match, {key}: {_figures(values)}")
    assert sum(len(v) for k, v in run_["spans"].items() if k not in ("before", "after")), (
        "no deal during the flood"
    )


class _Joiner(Bot):
    def play(self, view):
        return view.legal[0]


def test_a_seat_socket_takes_only_its_own_token_and_only_play(tmp_path):
    """Each seat's socket refuses the other seat's token and any unknown one, answers health and
    reflection with UNIMPLEMENTED, refuses a third connection; then both seats join and finish."""
    seen: dict[str, object] = {}
    started = threading.Event()

    def on_ready(addresses, tokens) -> None:
        seen["addresses"], seen["tokens"] = addresses, tokens
        started.set()

    out: dict[str, object] = {}
    match = threading.Thread(
        target=lambda: out.setdefault("m", play_match(
            (None, None), rules=Rules(max_deals=1), seed=3, time_control=TimeControl(startup=60, move=5, bank=10),
            launcher=None, on_ready=on_ready,
        )), daemon=True,
    )  # fmt: skip
    match.start()
    assert started.wait(30)
    addresses, tokens = seen["addresses"], seen["tokens"]
    assert [len(a) for a in addresses] == [1, 1] and addresses[0] != addresses[1]
    for seat in (0, 1):
        with grpc.insecure_channel(addresses[seat][0]) as ch:
            for token in (tokens[1 - seat], "not-a-token"):
                join = pb.BotMessage(join=pb.Join(token=token, protocol_version=1))
                with pytest.raises(grpc.RpcError) as refused:
                    list(pbg.RefereeStub(ch).Play(iter([join]), timeout=10))
                assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
                assert f"this socket serves seat {seat} only" in refused.value.details()
    # A refused Join (an unknown protocol version) leaves the seat's token usable: the retry below joins.
    with grpc.insecure_channel(addresses[0][0]) as ch:
        join = pb.BotMessage(join=pb.Join(token=tokens[0], protocol_version=2))
        with pytest.raises(grpc.RpcError) as refused:
            list(pbg.RefereeStub(ch).Play(iter([join]), timeout=10))
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(addresses[0][0]) as ch:
        with pytest.raises(grpc.RpcError) as health:
            health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.value.code() == grpc.StatusCode.UNIMPLEMENTED
    # SEAT_CONNECTIONS connections are accepted; one more is closed by gRPC's core at once.
    channels = [grpc.insecure_channel(addresses[1][0], options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(SEAT_CONNECTIONS + 1)]  # fmt: skip
    try:
        codes = []
        for ch in channels:
            try:
                health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=3)
            except grpc.RpcError as exc:
                codes.append(exc.code())
            # keep each connection open while the next one connects
        assert codes[:SEAT_CONNECTIONS] == [grpc.StatusCode.UNIMPLEMENTED] * SEAT_CONNECTIONS
        assert codes[SEAT_CONNECTIONS] == grpc.StatusCode.UNAVAILABLE
    finally:
        for ch in channels:
            ch.close()
    time.sleep(0.3)  # the server drops the closed connections before the bots connect
    players = [
        threading.Thread(target=run, args=(_Joiner(), addresses[s][0], tokens[s]), daemon=True)
        for s in (0, 1)
    ]
    for p in players:
        p.start()
    match.join(60)
    assert out["m"].verdicts == ("OK", "OK")
