"""The rules for claiming a seat, shared by every way a bot joins (a gRPC stream on the server or on
a seat's own socket, and the stdio seat), without gRPC itself: a refusal names its status code by
name, and the gRPC servers turn it into that status. So a match of stdio bots never loads gRPC."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.referee.match import MatchRunner
    from arena.referee.session import Seat


class JoinRefused(Exception):
    """A Join the referee refuses; `code` is a grpc.StatusCode's name (PERMISSION_DENIED...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def check_claim(runner: MatchRunner, seat: Seat) -> None:
    """The rules every server applies once a token has named its seat: unused, match not over."""
    if seat.claimed:
        raise JoinRefused(
            "PERMISSION_DENIED",
            f"seat token already used: seat {seat.index} of match {runner.spec.match_id} has joined",
        )
    if runner.state == "OVER":
        raise JoinRefused(
            "FAILED_PRECONDITION", f"match {runner.spec.match_id} is over: its seat tokens cannot join again"
        )
