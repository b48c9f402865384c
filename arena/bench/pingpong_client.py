"""BASELINE ONLY, for `arena bench referee`: a bare gRPC client doing ping-pong on one Play stream,
written like the SDK's client (sync stub, request queue) and doing the bench's trivial bot's work per
message (the SDK View, then the first legal card), so that only the server side differs.

    python -m arena.bench.pingpong_client ADDRESS ROUNDS
"""

from __future__ import annotations

import queue
import sys

import grpc

from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.sdk import View


def main() -> None:
    address, rounds = sys.argv[1], int(sys.argv[2])
    out: queue.SimpleQueue = queue.SimpleQueue()
    with grpc.insecure_channel(address) as channel:
        responses = pbg.RefereeStub(channel).Play(iter(out.get, None), wait_for_ready=True)
        out.put(pb.BotMessage(action=pb.Action(turn_id=0, card="AS")))
        for msg in responses:
            if not msg.HasField("turn_request"):
                continue
            view = View.from_request(msg.turn_request)
            if view.turn_id >= rounds:
                break
            out.put(pb.BotMessage(action=pb.Action(turn_id=view.turn_id, card=view.legal[0])))
        out.put(None)


if __name__ == "__main__":
    main()
