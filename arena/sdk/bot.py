"""The bot base class and `run()`, which plays one match for it: over gRPC, or over the stdio lines
of docs/stdio.md when the bot declares `protocol = "stdio"`."""

from __future__ import annotations

import os
import queue
import random
import sys
from collections.abc import Callable

from arena.proto import referee_pb2 as pb
from arena.proto.lines import bot_line, referee_message
from arena.proto.protocol import PROTOCOL_VERSION
from arena.sdk.view import View

#: What the arena adds to a stdio bot's environment (every launcher, and the bridge for its child), so
#: that `run()` speaks the lines of docs/stdio.md on stdin and stdout instead of gRPC. The launchers
#: keep their own copy (arena.sandbox.launcher.STDIO_ENV: the sandbox does not import the SDK).
STDIO_ENV = {"ARENA_PROTOCOL": "stdio"}


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
    _send: Callable[[pb.BotMessage], None] | None = None  # set by run()

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
        if self._send is not None:
            self._send(pb.BotMessage(log=pb.Log(text=str(text))))


def run(bot: Bot, address: str | None = None, token: str | None = None) -> pb.MatchResult:
    """Play one match and return its result. Under a launcher that speaks the stdio protocol to the
    bot (`protocol = "stdio"` in bot.toml: the arena sets ARENA_PROTOCOL=stdio), over the JSON lines
    of docs/stdio.md on stdin and stdout; otherwise over gRPC, to ARENA_ADDRESS with ARENA_TOKEN."""
    if address is None and all(os.environ.get(k) == v for k, v in STDIO_ENV.items()):
        return _run_stdio(bot)
    address = address or os.environ.get("ARENA_ADDRESS", "")
    token = token if token is not None else os.environ.get("ARENA_TOKEN", "")
    if not address or not token:
        sys.exit("arena sdk: set ARENA_ADDRESS and ARENA_TOKEN (the arena sets both when it starts your bot)")
    import grpc  # only here: a stdio bot never loads gRPC, about 40 ms of its start-up

    from arena.proto import referee_pb2_grpc as pbg

    outbox: queue.SimpleQueue[pb.BotMessage | None] = queue.SimpleQueue()
    bot._send = outbox.put
    outbox.put(pb.BotMessage(join=pb.Join(
        token=token, bot_name=bot.name or type(bot).__name__, bot_version=bot.version,
        protocol_version=PROTOCOL_VERSION,
    )))  # fmt: skip
    result = pb.MatchResult()
    with grpc.insecure_channel(address) as channel:
        responses = pbg.RefereeStub(channel).Play(iter(outbox.get, None), wait_for_ready=True)
        try:
            for msg in responses:
                ended = _dispatch(bot, msg, outbox.put)
                if ended is not None:
                    result = ended
                    break
        except grpc.RpcError as exc:
            sys.exit(f"arena sdk: the referee ended the stream: {exc.code().name}: {exc.details()}")
        finally:
            outbox.put(None)
    return result


def _run_stdio(bot: Bot) -> pb.MatchResult:
    """The match over the bot's stdin and stdout. The protocol moves to fds of its own first, and
    fd 1 becomes the log (fd 2): a `print()` in the bot, or a C library's write to stdout, lands in
    the log instead of breaking a line of the protocol."""
    sys.stdout.flush()
    lines_in = os.fdopen(os.dup(0), "rb")
    lines_out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)

    def send(message: pb.BotMessage) -> None:
        lines_out.write(bot_line(message).encode())

    bot._send = send
    with lines_in, lines_out:
        for raw in lines_in:  # end of file after the match_result line
            try:
                msg = referee_message(raw)
            except ValueError:
                continue  # not a referee line: nothing to answer
            ended = _dispatch(bot, msg, send)
            if ended is not None:
                return ended
    return pb.MatchResult()


def _dispatch(
    bot: Bot, msg: pb.RefereeMessage, send: Callable[[pb.BotMessage], None]
) -> pb.MatchResult | None:
    """Call the bot's hooks for one message and answer a turn; the result once the match ended."""
    kind = msg.WhichOneof("msg")
    if kind == "turn_request":
        req = msg.turn_request
        if req.HasField("deal_start"):  # the first turn of a deal
            bot.on_deal_start(req.deal_start)
        elif req.HasField("trick_result"):
            bot.on_trick(req.trick_result)
        card = bot.play(View.from_request(req))
        send(pb.BotMessage(action=pb.Action(turn_id=req.turn_id, card=str(card))))
    elif kind == "deal_result":
        ended = msg.deal_result
        if ended.HasField("last_trick"):
            bot.on_trick(ended.last_trick)
        bot.on_deal_end(ended)
    elif kind == "welcome":
        w = msg.welcome
        bot.seat, bot.rules, bot.match_id, bot.opponent = w.seat, w.rules, w.match_id, w.opponent_name
        bot.bot_seed = w.bot_seed
        bot.rng = random.Random(w.bot_seed)  # an int seed: the same in every Python 3
    elif kind == "error":
        print(f"arena sdk: referee says {msg.error.code}: {msg.error.message}", file=sys.stderr)
    elif kind == "match_result":
        bot.on_match_end(msg.match_result)
        return msg.match_result
    return None
