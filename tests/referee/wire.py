"""A hand-written bot client for the conformance suite: the generated referee_pb2 messages over a plain
gRPC channel, no SDK. It sends what the test says (messages or raw bytes), records every message the
referee sends in order, and the status the call ends with."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

import grpc

from arena.proto import referee_pb2 as pb

PLAY = "/elfern.arena.v1.Referee/Play"
CARD = r"[789TJQKA][CDHS]"  # a wire card code


def _serialize(msg: pb.BotMessage | bytes) -> bytes:
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


class Wire:
    """One Play stream. `recv()` gives the referee's messages in order, None once the call ended;
    `code`/`details` are then its final status."""

    def __init__(self, address: str, timeout: float = 60.0) -> None:
        self.channel = grpc.insecure_channel(address)
        self._out: queue.SimpleQueue = queue.SimpleQueue()
        call = self.channel.stream_stream(
            PLAY, request_serializer=_serialize, response_deserializer=pb.RefereeMessage.FromString
        )
        self._call = call(iter(self._out.get, None), timeout=timeout, wait_for_ready=True)
        self.received: list[pb.RefereeMessage] = []
        self.code: grpc.StatusCode | None = None
        self.details = ""

    def send(self, msg: pb.BotMessage | bytes) -> None:
        self._out.put(msg)

    def join(self, token: str, name: str = "wire", version: int = 1) -> None:
        self.send(
            pb.BotMessage(join=pb.Join(token=token, bot_name=name, bot_version="1", protocol_version=version))
        )

    def action(self, turn_id: int, card: str) -> None:
        self.send(pb.BotMessage(action=pb.Action(turn_id=turn_id, card=card)))

    def log(self, text: str) -> None:
        self.send(pb.BotMessage(log=pb.Log(text=text)))

    def half_close(self) -> None:
        self._out.put(None)

    def recv(self) -> pb.RefereeMessage | None:
        if self.code is not None:
            return None
        try:
            msg = next(self._call)
        except StopIteration:
            self.code, self.details = self._call.code(), self._call.details() or ""
            return None
        except grpc.RpcError as exc:
            self.code, self.details = exc.code(), exc.details() or ""
            return None
        self.received.append(msg)
        return msg

    def until(self, kind: str) -> pb.RefereeMessage:
        """Read up to and including the next message of `kind`."""
        while (msg := self.recv()) is not None:
            if msg.WhichOneof("msg") == kind:
                return msg
        raise AssertionError(f"the call ended ({self.code}: {self.details}) before a {kind}")

    def finish(self) -> tuple[grpc.StatusCode, str]:
        """Read to the end of the call; its status."""
        while self.recv() is not None:
            pass
        assert self.code is not None
        return self.code, self.details

    def kinds(self) -> list[str]:
        return [m.WhichOneof("msg") for m in self.received]

    def of(self, kind: str) -> list:
        return [getattr(m, kind) for m in self.received if m.WhichOneof("msg") == kind]

    def close(self) -> None:
        self._out.put(None)
        self.channel.close()


Chooser = Callable[[pb.TurnRequest], "str | None"]


def first_legal(req: pb.TurnRequest) -> str:
    return req.legal_cards[0]


def play_out(wire: Wire, choose: Chooser = first_legal, close: bool = True) -> tuple[grpc.StatusCode, str]:
    """Answer every TurnRequest with `choose(req)` (None: do not answer) until the call ends; then
    half-close (the bot is done) and return the final status."""
    while (msg := wire.recv()) is not None:
        if msg.WhichOneof("msg") == "turn_request":
            card = choose(msg.turn_request)
            if card is not None:
                wire.action(msg.turn_request.turn_id, card)
        elif msg.WhichOneof("msg") == "match_result" and close:
            wire.half_close()
    assert wire.code is not None
    return wire.code, wire.details


def in_thread(fn: Callable, *args) -> threading.Thread:
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t
