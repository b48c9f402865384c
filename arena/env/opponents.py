"""An opponent for the single-agent environment: a Python bot (a sample bot, or a Python bundle with a
`bot.py`) played in-process exactly as the arena plays it. It receives the referee's own messages: the
Welcome, each TurnRequest as the referee's per-move path builds it (`arena.referee.turns.DealTurns`),
each DealResult (`arena.referee.convert.deal_result`) and the MatchResult, dispatched to its hooks by
the SDK's own dispatcher, so it cannot tell this from a real match."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path

from arena.engine import Match, TrickRecord, bot_seed, parse_card
from arena.proto import referee_pb2 as pb
from arena.proto.protocol import PROTOCOL_VERSION
from arena.referee.clock import SeatClock, TimeControl
from arena.referee.convert import deal_result, rules_to_proto
from arena.referee.turns import DealTurns
from arena.sdk import Bot
from arena.sdk.bot import _dispatch
from arena.verdicts import Verdict

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots" / "python"


class OpponentError(ValueError):
    """An opponent that cannot be loaded or that broke the rules; the message names it and the fix."""


def bot_class(source: str | Path) -> Callable[[], Bot]:
    """The Bot subclass of a Python sample bot (`"greedy"`) or of a Python bundle folder (a path)."""
    where = Path(source)
    if not where.is_dir():
        where = SAMPLE_BOTS / str(source)
    names = sorted(p.name for p in SAMPLE_BOTS.iterdir() if (p / "bot.py").is_file())
    if not (where / "bot.py").is_file():
        raise OpponentError(
            f"opponent {str(source)!r} is neither a Python sample bot ({', '.join(names)}) nor a folder "
            "with a bot.py (a Python bundle); bundles in other languages cannot play in-process"
        )
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))  # its sibling modules (greedy_strategy.py, ...)
    spec = importlib.util.spec_from_file_location(f"arena_env_opponent_{where.name}", where / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, Bot) and v is not Bot]
    if len(found) != 1:
        raise OpponentError(f"{where / 'bot.py'} should define exactly one Bot subclass, found {len(found)}")
    return found[0]


class Opponent:
    """The referee's side of one seat of one match: the messages a bot receives, in the referee's
    order. Subclasses deliver them (`_send`) and ask for a card (`_ask`). Make a new one per episode."""

    def __init__(self, match: Match, seat: int, name: str = "learner") -> None:
        self.match = match
        self.seat = seat
        self.turn_id = 0
        self.clock = SeatClock(TimeControl())
        self.turns: DealTurns | None = None
        welcome = pb.Welcome(
            match_id=f"env-{match.seed}", seat=seat, rules=rules_to_proto(match.rules),
            time_control=TimeControl().to_proto(), opponent_name=name, protocol_version=PROTOCOL_VERSION,
            bot_seed=bot_seed(match.seed, seat),
        )  # fmt: skip
        self._send(pb.RefereeMessage(welcome=welcome))

    def _send(self, msg: pb.RefereeMessage) -> None:
        raise NotImplementedError

    def _ask(self, msg: pb.RefereeMessage) -> str | None:
        """Send a TurnRequest; the card the bot answers (None: no answer)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the opponent holds (a process); the in-process bot holds nothing."""

    def deal_started(self) -> None:
        """Call after every `start_deal`."""
        self.turns = DealTurns(self.match)

    def trick_done(self, trick: TrickRecord) -> None:
        """Call after every finished trick (the last one of a deal too)."""
        deal = self.match.deal
        assert deal is not None and self.turns is not None
        if deal.done:
            self._send(deal_result(self.match, trick, self.seat))
        else:
            self.turns.trick_done(trick, self.seat)

    def match_over(self, forfeit: bool = False) -> None:
        """Tell the bot the match ended: played out, or lost by its opponent's illegal card (`forfeit`),
        as the referee's MatchResult says it."""
        m, me = self.match, self.seat
        verdicts = [Verdict.OK.value, Verdict.OK.value]
        if forfeit:
            verdicts[1 - me] = Verdict.ILLEGAL_MOVE.value
        winner = me if forfeit else (-1 if m.winner is None else m.winner)
        result = pb.MatchResult(
            winner=winner, verdicts=verdicts, lines=m.lines, flags=m.flags, deals_played=len(m.deals),
            end_reason="VERDICT" if forfeit else "COMPLETED",
        )  # fmt: skip
        self._send(pb.RefereeMessage(match_result=result))

    def choose(self) -> int:
        """The bot's card for the turn now due in its seat."""
        assert self.turns is not None
        self.turn_id += 1
        msg = self.turns.request(self.seat, self.turn_id, self.clock)
        answer = self._ask(msg)
        legal = list(msg.turn_request.legal_cards)
        if answer is None or answer not in legal:
            raise OpponentError(f"opponent {self} played {answer!r}, not one of its legal cards {legal}")
        return parse_card(answer)


class BotOpponent(Opponent):
    """A Python Bot in this process, its hooks called by the SDK's own dispatcher."""

    def __init__(self, make_bot: Callable[[], Bot], match: Match, seat: int, name: str = "learner") -> None:
        self.bot = make_bot()
        self._answer: str | None = None
        super().__init__(match, seat, name)

    def __str__(self) -> str:
        return type(self.bot).__name__

    def _send(self, msg: pb.RefereeMessage) -> None:
        _dispatch(self.bot, msg, self._receive)

    def _receive(self, msg: pb.BotMessage) -> None:
        self._answer = msg.action.card

    def _ask(self, msg: pb.RefereeMessage) -> str | None:
        self._answer = None
        self._send(msg)
        return self._answer
