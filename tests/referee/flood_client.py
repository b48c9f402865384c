"""A hostile remote bot for tests/referee/test_bot_socket.py: it joins its seat properly on one stream
(and plays it later), and in between attacks its own socket in every way a bot can reach:

  raw       CONNECTIONS raw HTTP/2 connections with STREAMS streams each, every stream announcing a
            large gRPC message (4 MiB, or just under the socket's limit) and sending only part of it
  services  health, reflection, and a Join with the other seat's token
  calls     200 Play calls at once on a second connection, none of them sending anything (past the
            socket's call budget: the seat then loses, and its socket goes)

Usage: `flood_client.py ADDRESS UNIX_PATH TOKEN OTHER_TOKEN CONNECTIONS STREAMS HOLD`. It prints "ready"
once its seat is playing, waits for a line on stdin, prints one JSON line per phase, then "flood-end",
then plays on (first legal card) if its seat still can, and prints "done". Nothing here asserts: the test does.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from h2flood import flood

from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg

try:
    from arena.referee.botsocket import BOT_SOCKET_RECEIVE_CAP
except ImportError:  # an older referee, for a before/after comparison
    BOT_SOCKET_RECEIVE_CAP = 17 * 1024
from arena.sdk import Bot, run

CALLS = 200
MiB = 1024 * 1024


class Patient(Bot):
    """Plays the first legal card, but not before the flood is over."""

    def __init__(self) -> None:
        self.playing = threading.Event()
        self.go = threading.Event()

    def play(self, view):
        self.playing.set()
        self.go.wait(120)
        return view.legal[0]


def emit(obj: object) -> None:
    print(obj if isinstance(obj, str) else json.dumps(obj), flush=True)


async def calls_phase(address: str) -> dict:
    """CALLS concurrent Play calls that send nothing; every status that comes back within a few seconds."""
    # A channel of its own (not the SDK's): a second connection to the socket.
    async with grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
        stub = pbg.RefereeStub(ch)
        calls = [stub.Play() for _ in range(CALLS)]
        deadline = time.monotonic() + 15
        codes: dict[str, int] = {}
        details: dict[str, str] = {}
        pending = {asyncio.ensure_future(c.code()): c for c in calls}
        while pending and time.monotonic() < deadline:
            done, _ = await asyncio.wait(pending, timeout=3, return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                call = pending.pop(fut)
                name = fut.result().name
                codes[name] = codes.get(name, 0) + 1
                if name != "RESOURCE_EXHAUSTED":
                    details.setdefault(name, await call.details())
            if len(pending) <= 2 and not done:  # the rest hold a call slot, waiting for a Join
                break
        codes["held"] = len(pending)
        codes.update({f"{k} details": v for k, v in details.items()})
        for c in pending.values():
            c.cancel()
        await asyncio.sleep(0.2)
    return codes


def services_phase(address: str, other_token: str) -> dict:
    out: dict[str, str] = {}
    with grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
        try:
            health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=10)
            out["health"] = "OK"
        except grpc.RpcError as exc:
            out["health"] = exc.code().name
        try:
            req = reflection_pb2.ServerReflectionRequest(list_services="")
            list(reflection_pb2_grpc.ServerReflectionStub(ch).ServerReflectionInfo(iter([req]), timeout=10))
            out["reflection"] = "OK"
        except grpc.RpcError as exc:
            out["reflection"] = exc.code().name
        join = pb.BotMessage(join=pb.Join(token=other_token, protocol_version=1))
        try:
            list(pbg.RefereeStub(ch).Play(iter([join]), timeout=10))
            out["other_token"] = "OK"
        except grpc.RpcError as exc:
            out["other_token"] = exc.code().name
            out["other_token_details"] = exc.details()
    return out


def main() -> None:
    address, unix_path, token, other_token = sys.argv[1:5]
    connections, streams, hold = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
    bot = Patient()
    player = threading.Thread(target=run, args=(bot, address, token), daemon=True)
    player.start()
    if not bot.playing.wait(60):
        emit({"error": "the seat never got a turn"})
        sys.exit(1)
    emit("ready")
    sys.stdin.readline()
    messages = [(4 * MiB, 4 * MiB), (BOT_SOCKET_RECEIVE_CAP - 64, BOT_SOCKET_RECEIVE_CAP - 1024)]
    emit({"phase": "raw", **flood(unix_path, connections, streams, messages, hold)})
    time.sleep(0.5)  # let the server see those connections go before the next ones arrive
    emit({"phase": "services", **services_phase(address, other_token)})
    time.sleep(0.5)
    emit({"phase": "calls", **asyncio.run(calls_phase(address))})
    emit("flood-end")
    bot.go.set()
    player.join(120)
    emit("done" if not player.is_alive() else "still playing")


if __name__ == "__main__":
    main()
