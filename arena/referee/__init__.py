"""The gRPC referee: seat streams, tokens, clocks, verdicts, the match runner. See docs/referee.md.

Imports engine and proto only (layers); bot processes are seen through the `BotHandle` protocol.
"""

from arena.referee.clock import TimeControl, TimeControlError
from arena.referee.handles import BotHandle
from arena.referee.match import PROTOCOL_VERSION, MatchRunner, MatchSpec
from arena.referee.session import LogLimits

__all__ = [
    "PROTOCOL_VERSION",
    "BotHandle",
    "LogLimits",
    "MatchRunner",
    "MatchSpec",
    "TimeControl",
    "TimeControlError",
]
