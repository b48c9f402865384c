"""The one list of verdicts: how a seat's match ended, and whether that was the bot's own fault.

Every layer (referee, sandbox, ladder, web) names verdicts through `Verdict`. It sits beside the
engine at the bottom of the package because it is plain data that every layer shares; it imports
nothing. `Verdict` is a `StrEnum`, so a value equals its name as a string and is stored, sent over
gRPC and written into records as that plain string.
"""

from __future__ import annotations

from enum import StrEnum


class Verdict(StrEnum):
    """A seat's verdict. `fault` says whether it counts against the bot (suspension, forfeits)."""

    OK = "OK"
    TIMEOUT = "TIMEOUT"  # did not answer in time (move clock and bank spent)
    ILLEGAL_MOVE = "ILLEGAL_MOVE"  # played a card the rules forbid
    CRASH = "CRASH"  # its process died
    DISCONNECT = "DISCONNECT"  # dropped its connection while its process lived on
    PROTOCOL_ERROR = "PROTOCOL_ERROR"  # broke the wire protocol (bad message, stale-turn flood, oversize)
    STARTUP_FAILED = "STARTUP_FAILED"  # never joined within the start-up clock
    MEMORY_LIMIT = "MEMORY_LIMIT"  # killed by the memory cap, or died of an allocation failure
    CPU_LIMIT = "CPU_LIMIT"  # spent its CPU-time budget
    PIDS_LIMIT = "PIDS_LIMIT"  # the process cap refused a fork or thread
    BUILD_FAILED = "BUILD_FAILED"  # the bundle's build step failed or timed out

    @property
    def fault(self) -> bool:
        """True when the verdict is the bot's own doing (DISCONNECT included: the process chose to leave)."""
        return self is not Verdict.OK


#: Every fault verdict, for queries and suspension.
FAULTS: frozenset[Verdict] = frozenset(v for v in Verdict if v.fault)


def is_fault(name: str) -> bool:
    """True for the name of a fault verdict; unknown names (from an old record) are not faults."""
    try:
        return Verdict(name).fault
    except ValueError:
        return False
