"""Verdict names: how a seat's match ended. The sandbox adds its own (MEMORY_LIMIT, ...) by name."""

from __future__ import annotations

OK = "OK"
TIMEOUT = "TIMEOUT"
ILLEGAL_MOVE = "ILLEGAL_MOVE"
CRASH = "CRASH"
DISCONNECT = "DISCONNECT"
PROTOCOL_ERROR = "PROTOCOL_ERROR"
STARTUP_FAILED = "STARTUP_FAILED"

VERDICTS = (OK, TIMEOUT, ILLEGAL_MOVE, CRASH, DISCONNECT, PROTOCOL_ERROR, STARTUP_FAILED)

# MatchResult.end_reason
COMPLETED = "COMPLETED"
VERDICT = "VERDICT"
SHUTDOWN = "SHUTDOWN"
ABORTED = "ABORTED"  # the match task was cancelled, or a referee bug: void, nobody to blame
