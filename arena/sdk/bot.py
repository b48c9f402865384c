"""The bot base class and `run()`, which plays one match over gRPC for it."""

from __future__ import annotations

import os
import queue
import random
import sys

import grpc

from arena.proto import referee_pb2 as pb
from arena.proto import referee_pb2_grpc as pbg
from arena.proto.protocol import PROTOCOL_VERSION
from arena.sdk.view import View


class Bot:
    """Subclass and implement `play(view) -> card`. The hooks are optional.

    After the Welcome, `self.seat`, `self.rules` (a referee_pb2.Rules), `self.match_id`,
    `self.opponent` and `self.bot_seed` are set, and `self.rng` is a `random.Random` seeded with
    `bot_seed` (docs/shuffle.md §6), made afresh at the Welcome, before the first turn. Take every
    random choice from `self.rng`: the same match seed then gives the same moves, so
    `arena play A B --seed N` reproduces a match.
    """

    name: str = ""
    version: str = ""

    seat: int = 0
    rules: pb.Rules | None = None
    match_id: str = ""
    opponent: str = ""
    bot_seed: int = 0
    rng: random.Random
    _outbox: queue.SimpleQueue[pb.BotMessage | None] | None = None

    def play(self, view: View) -> str:
        """Return one of `view.legal` (a text code such as "AS")."""
        raise NotImplementedError("implement play(view) and return one of view.legal")

    def on_deal_start(self, deal: pb.DealStart) -> None:
        """A new deal: `deal.hand`, `deal.dealer`, `deal.trump_card`. Called just before your first
        `play()` of the deal (the referee sends it with that turn)."""

    def on_trick(self, result: pb.TrickResult) -> None:
        """A trick ended: `result.trick` (lead, follow, winner), `result.drawn_card`. Called before
        your next `play()`, and for a deal's last trick before `on_deal_end()`."""

    def on_deal_end(self, result: pb.DealResult) -> None:
        """A deal ended: honours, winner, lines."""

    def on_match_end(self, result: pb.MatchResult) -> None:
        """The match ended: winner, verdicts."""

    def log(self, text: str) -> None:
        """Send a debug line to the referee; it is kept in the replay for you (rate-limited)."""
        if self._outbox is not None:
            self._outbox.put(pb.BotMessage(log=pb.Log(text=str(text))))


def run(bot: Bot, address: str | None = None, token: str | None = None) -> pb.MatchResult:
    """Play one match: connect to ARENA_ADDRESS with ARENA_TOKEN, answer every turn, return the result."""
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token if token is not None else os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        sys.exit("arena sdk: set ARENA_ADDRESS and ARENA_TOKEN (the arena sets both when it starts your bot)")
    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    bot._outbox = outbox
    outbox.put(pb.BotMessage(join=pb.Join(
        token=token, bot_name=bot.name or type(bot).__name__, bot_version=bot.version,
        protocol_version=PROTOCOL_VERSION,
    )))  # fmt: skip
    result = pb.MatchResult()
    with grpc.insecure_channel(address) as channel:
        responses = pbg.RefereeStub(channel).Play(iter(outbox.get, None), wait_for_ready=True)
        try:
            for msg in responses:
                kind = msg.WhichOneof("msg")
                if kind == "turn_request":
                    req = msg.turn_request
                    if req.HasField("deal_start"):  # the first turn of a deal
                        bot.on_deal_start(req.deal_start)
                    elif req.HasField("trick_result"):
                        bot.on_trick(req.trick_result)
                    card = bot.play(View.from_request(req))
                    outbox.put(pb.BotMessage(action=pb.Action(turn_id=req.turn_id, card=str(card))))
                elif kind == "deal_result":
                    ended = msg.deal_result
                    if ended.HasField("last_trick"):
                        bot.on_trick(ended.last_trick)
                    bot.on_deal_end(ended)
                elif kind == "welcome":
                    w = msg.welcome
                    bot.seat, bot.rules, bot.match_id, bot.opponent = (
                        w.seat,
                        w.rules,
                        w.match_id,
                        w.opponent_name,
                    )
                    bot.bot_seed = w.bot_seed
                    bot.rng = random.Random(w.bot_seed)  # an int seed: the same in every Python 3
                elif kind == "error":
                    print(f"arena sdk: referee says {msg.error.code}: {msg.error.message}", file=sys.stderr)
                elif kind == "match_result":
                    result = msg.match_result
                    bot.on_match_end(result)
                    break
        except grpc.RpcError as exc:
            sys.exit(f"arena sdk: the referee ended the stream: {exc.code().name}: {exc.details()}")
        finally:
            outbox.put(None)
    return result
