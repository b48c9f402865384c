"""The gRPC referee: seat streams, tokens, clocks, verdicts, the match runner. See docs/referee.md.

Imports engine and proto only (layers); bot processes are seen through the `BotHandle` protocol.
"""

from arena.proto.protocol import PROTOCOL_VERSION
from arena.referee.clock import TimeControl, TimeControlError
from arena.referee.handles import BotHandle
from arena.referee.match import MatchRunner
from arena.referee.session import LogLimits
from arena.referee.spec import MatchSpec

__all__ = [
    "PROTOCOL_VERSION",
    "BotHandle",
    "LogLimits",
    "MatchRunner",
    "MatchSpec",
    "TimeControl",
    "TimeControlError",
]
