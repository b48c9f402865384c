"""How a match ends: each seat's verdict with its public detail and private quote, the end reason, and
what follows from them (the MatchResult, the owner-only texts, each seat's last Error and call status).
The runner (match.py) rules; an `Outcome` keeps the ruling, so the result is built in one place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.proto import referee_pb2 as pb
from arena.referee import verdicts as V
from arena.referee.streams import describe_exit

if TYPE_CHECKING:
    from arena.engine import Match
    from arena.referee.handles import BotHandle

# bot output lines quoted in a verdict's private detail (a Python traceback through the SDK takes 13)
TAIL_LINES = 20
# the status a seat's call ends with when its own verdict ended the match (after Error and MatchResult)
FAULT_STATUS: dict[str, str] = {
    V.TIMEOUT: "DEADLINE_EXCEEDED",
    V.ILLEGAL_MOVE: "FAILED_PRECONDITION",
    V.PROTOCOL_ERROR: "INVALID_ARGUMENT",
    V.DISCONNECT: "FAILED_PRECONDITION",
}


class MatchOver(Exception):
    """Unwinds the runner once the result is known."""


class Outcome:
    """The verdicts of one match as they are ruled. `handles` is the runner's list of the bots'
    processes: a sandbox's own verdict (a memory or CPU cap) wins over the referee's, and a failed
    bot's output tail goes to its owner."""

    def __init__(self, handles: list[BotHandle | None]) -> None:
        self.handles = handles
        self.verdicts: list[str] = [V.OK, V.OK]
        self.details = ["", ""]  # public: sentences the arena wrote (MatchResult, ResultRecord.details)
        self.quotes = ["", ""]  # private: the bot's own text a verdict quotes (with its output tail)
        self.end_reason = ""

    def set_failure(self, i: int, verdict: str, why: str, quote: str, where: tuple[int, int, int]) -> None:
        """`why` is public, so it is the arena's own words; anything that quotes the bot goes in `quote`.
        `where` is (deal, trick, turn), named in the detail when a turn was played."""
        h = self.handles[i]
        if h is not None:
            sandbox_verdict = h.failure_verdict()
            if sandbox_verdict:
                verdict = sandbox_verdict
        deal, trick, turn = where
        at = f" (deal {deal}, trick {trick}, turn {turn})" if turn else ""
        self.verdicts[i] = verdict
        self.details[i] = why + at
        self.quotes[i] = quote

    def startup_failed(self, i: int, exit_code: int | None, limit: float, join_error: str) -> None:
        """Seat i never joined: its process exited first, or the start-up budget ran out."""
        if exit_code is not None:
            why = f"the bot exited ({describe_exit(exit_code)}) before it joined"
        else:
            why = f"the bot did not join within the start-up budget of {limit:g} s"
        if join_error:
            why += f"; its Join was refused: {join_error}"
        self.set_failure(i, V.STARTUP_FAILED, why, "", (0, 0, 0))

    def over(self) -> MatchOver:
        """A verdict ended the match: the exception that unwinds the runner."""
        self.end_reason = V.VERDICT
        return MatchOver()

    def end_void(self, why: str, reason: str = V.SHUTDOWN) -> None:
        self.end_reason = reason
        self.details = [why, why]

    @property
    def failed(self) -> list[int]:
        return [i for i in (0, 1) if self.verdicts[i] != V.OK]

    def result(self, m: Match) -> pb.MatchResult:
        """What both bots receive: the public sentences only (a seat never sees its opponent's text)."""
        failed = self.failed
        if self.end_reason == V.COMPLETED:
            winner, void = (-1 if m.winner is None else m.winner), False
        elif len(failed) == 1:
            winner, void = 1 - failed[0], False
        else:
            winner, void = -1, True
        return pb.MatchResult(
            winner=winner, void=void, verdicts=self.verdicts, details=self.details, lines=list(m.lines),
            flags=list(m.flags), deals_played=len(m.deals), end_reason=self.end_reason,
        )  # fmt: skip

    def private(self) -> list[str]:
        """Each seat's owner-only text: its quote and, for a failed bot, the tail of its output, which
        helps its author most."""
        private = list(self.quotes)
        for i in self.failed:
            h = self.handles[i]
            tail = h.output_tail(TAIL_LINES) if h is not None else ""
            if tail.strip():
                private[i] += ("\n" if private[i] else "") + "last output of the bot:\n" + tail
        return private

    def error(self, i: int, turn_id: int) -> pb.RefereeMessage | None:
        """The fatal Error a failed seat gets before its MatchResult; it may quote what it sent itself."""
        if self.verdicts[i] == V.OK:
            return None
        why = self.details[i] + (f"; {self.quotes[i]}" if self.quotes[i] else "")
        return pb.RefereeMessage(
            error=pb.Error(code=self.verdicts[i], message=why.split("\n")[0], fatal=True, turn_id=turn_id)
        )

    def end_status(self, i: int) -> tuple[str, str]:
        """The gRPC status that ends seat i's call: OK unless the match ended by its own fault or by the
        referee (the details then say how, as its Error and MatchResult did)."""
        if self.end_reason == V.SHUTDOWN:
            return "UNAVAILABLE", "the referee shut down; the match is void"
        if self.end_reason == V.ABORTED:
            return "ABORTED", "the match was aborted by the referee; it is void"
        verdict = self.verdicts[i]
        if verdict == V.OK:
            return "OK", ""
        return FAULT_STATUS.get(verdict, "ABORTED"), f"{verdict}: {self.details[i].split(chr(10))[0]}"
