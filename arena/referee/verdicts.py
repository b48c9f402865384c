"""The referee's names for how a seat's match ended (`arena.verdicts.Verdict`) and how a match ended."""

from __future__ import annotations

from arena.verdicts import Verdict

OK = Verdict.OK
TIMEOUT = Verdict.TIMEOUT
ILLEGAL_MOVE = Verdict.ILLEGAL_MOVE
CRASH = Verdict.CRASH
DISCONNECT = Verdict.DISCONNECT
PROTOCOL_ERROR = Verdict.PROTOCOL_ERROR
STARTUP_FAILED = Verdict.STARTUP_FAILED

# MatchResult.end_reason
COMPLETED = "COMPLETED"
VERDICT = "VERDICT"
SHUTDOWN = "SHUTDOWN"
ABORTED = "ABORTED"  # the match task was cancelled, or a referee bug: void, nobody to blame
