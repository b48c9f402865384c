"""`arena watch MATCH`: follow a match live in the terminal, trick by trick, from a remote `arena serve`.

The server's WatchMatch stream is one full trick behind the play for everyone, and shows no hidden
card (hands, stock) before the end; a finished match whose duplicate twin is still to be played
shows only its status. The server sends the final status as soon as the match is over, then the
tricks it still held back, then ends the stream: the command prints the result line last and exits
when the stream ends.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from arena.cli.errors import UserError
from arena.cli.remote import Remote, need_remote, remote_options, with_remote


def match_id(text: str) -> int:
    """`12` or `m12` (the referee's match id) -> 12."""
    digits = text[1:] if text[:1] in ("m", "M") else text
    if not digits.isdigit() or int(digits) < 1 or len(digits) > 19:
        raise UserError(f"MATCH {text[:40]!r}: give a match id, a number as `arena matches` lists it")
    return int(digits)


class Table:
    """Turns WatchEvents into lines; remembers the seats' names from the latest status."""

    def __init__(self, match: int) -> None:
        self.match = match
        self.players = ["seat 0", "seat 1"]
        self.last_state: tuple[str, bool] | None = None

    def seat(self, n: int) -> str:
        return self.players[n] if 0 <= n < len(self.players) else f"seat {n}"

    def status(self, s: Any) -> list[str]:
        if s.players:
            self.players = list(s.players)
        state = (s.status, s.revealed)
        if state == self.last_state:
            return []
        self.last_state = state
        head = f"match {s.id or self.match}"
        where = f"{s.kind}" + (f", season {s.season}" if s.season else "")
        if s.status == "done" and s.revealed:
            if s.void:
                result = "void"
            elif s.winner < 0:
                result = "a draw"
            else:
                result = f"{self.seat(s.winner)} won"
            lines = "-".join(str(x) for x in s.lines)
            verdicts = ", ".join(f"{self.seat(i)} {v}" for i, v in enumerate(s.verdicts))
            return [
                f"{head} over: {result}"
                + (f", lines {lines}" if lines else "")
                + (f" ({verdicts})" if verdicts else "")
            ]
        if s.status == "done":
            return [
                f"{head} is over; its tricks and result are published once its duplicate twin has been "
                f"played (`arena watch {s.id or self.match}` again then)"
            ]
        if s.status == "failed":
            return [f"{head} failed to play (no result, no replay)"]
        return [f"{head} ({where}): {' vs '.join(self.players)} — {s.status}"]

    def event(self, ev: Any) -> list[str]:
        kind = ev.WhichOneof("event")
        if kind == "status":
            return self.status(ev.status)
        if kind == "deal":
            return [f"deal {ev.deal.deal}, dealer {self.seat(ev.deal.dealer)}"]
        if kind == "trick":
            t = ev.trick
            plays = ", ".join(
                f"{self.seat((t.leader + i) % 2)} {shown_card(card)}" for i, card in enumerate(t.cards)
            )
            won = "-".join(str(x) for x in t.tricks_won)
            return [
                f"  trick {t.trick}: {plays} → {self.seat(t.winner)} takes it"
                + (f" (tricks {won})" if won else "")
            ]
        if kind == "deal_end":
            d = ev.deal_end
            who = "a standoff" if d.winner < 0 else f"{self.seat(d.winner)} wins it"
            lines = "-".join(str(x) for x in d.lines)
            return [f"deal {d.deal}: {who}" + (f"; lines {lines}" if lines else "")]
        return []


def shown_card(code: str) -> str:
    """A card as the terminal shows it (`♣7`, docs/rules.md "Card notation"); a code the stream
    should never send stays as sent."""
    from arena.engine.cards import CardError, code_label

    try:
        return code_label(code)
    except CardError:
        return code


def final(ev: Any) -> bool:
    """A status saying the match is over: its line is printed after the held-back tricks."""
    return ev.WhichOneof("event") == "status" and ev.status.status in ("done", "failed")


@click.command()
@click.argument("match", metavar="MATCH")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print each event as one JSON object per line (cards as wire codes, e.g. 7C).",
)
@remote_options
def watch(match: str, as_json: bool, remote: Remote | None) -> None:
    """Follow MATCH live, trick by trick, one full trick behind the play (as every spectator sees it).

    Works for a queued, running or finished match; exits when the match is over and shown.
    """
    from google.protobuf.json_format import MessageToDict

    from arena.proto import arena_pb2 as pb

    server = need_remote(remote, "watch")
    number = match_id(match)
    table = Table(number)
    last: list[str] = []  # the result line, printed once the last tricks are shown
    try:
        for ev in server.stream("WatchMatch", pb.WatchMatchRequest(match_id=number)):
            if as_json:
                click.echo(json.dumps(MessageToDict(ev, preserving_proto_field_name=True)))
            elif final(ev):
                last = table.event(ev) or last
            else:
                for line in table.event(ev):
                    click.echo(line)
            sys.stdout.flush()
        for line in last:
            click.echo(line)
    except KeyboardInterrupt:
        click.echo(f"\nstopped watching match {number}", err=True)
        sys.exit(130)


watch.help = with_remote(watch.help, "It needs a server: live matches are served by `arena serve`.")
