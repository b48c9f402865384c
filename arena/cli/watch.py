"""`arena watch MATCH`: follow a match live in the terminal, trick by trick, from a remote `arena serve`.

The server's WatchMatch stream is one full trick behind the play for everyone, and shows no hidden
card (hands, stock) before the end; a finished match whose duplicate twin is still to be played
shows only its status. The server sends the final status as soon as the match is over, then the
tricks it still held back, then ends the stream: the command prints the result line last and exits
when the stream ends.

A stream cut before the match is over (a replica behind the proxy killed or stopped, the connection
lost: gRPC UNAVAILABLE, or UNKNOWN "Stream removed" / INTERNAL "RST_STREAM" through a proxy, or a
stream the server ended with a status that is not final) is opened again, at once and then after
0.5, 1, 2, 4 and 8 s. A new stream starts from the match's first kept event; what was already
printed is skipped by its place in the match (deal, phase, trick: `Seen`), unless a status shows a
new attempt (it restarts from deal 1). If no stream can be opened again, the command exits 3 with
"the connection to the server was lost; run the same command again to resume".
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

import click

from arena.cli.errors import ServiceLost, UserError
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
        from arena.replay.live_board import LiveBoard

        self.match = match
        self.players = ["seat 0", "seat 1"]
        self.last_state: tuple[str, bool] | None = None
        self.board = LiveBoard(self.players)  # the deal's honours, as the web's live board counts them

    def seat(self, n: int) -> str:
        return self.players[n] if 0 <= n < len(self.players) else f"seat {n}"

    def status(self, s: Any) -> list[str]:
        if s.players:
            self.players = list(s.players)
            self.board.names = self.players
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
            self.board.feed({"kind": kind, "deal": ev.deal.deal, "dealer": ev.deal.dealer})
            return [f"deal {ev.deal.deal}, dealer {self.seat(ev.deal.dealer)}"]
        if kind == "trick":
            t = ev.trick
            self.board.feed({"kind": kind, "deal": t.deal, "trick": t.trick, "leader": t.leader,
                             "cards": list(t.cards), "winner": t.winner})  # fmt: skip
            plays = ", ".join(
                f"{self.seat((t.leader + i) % 2)} {shown_card(card)}" for i, card in enumerate(t.cards)
            )
            won = "-".join(str(x) for x in t.tricks_won)
            return [
                f"  trick {t.trick}: {plays} → {self.seat(t.winner)} takes it"
                + (f" (tricks {won})" if won else ""),
                f"    {self.board.standing()}",  # the honours so far, and who they favour
            ]
        if kind == "deal_end":
            d = ev.deal_end
            self.board.feed({"kind": kind, "deal": d.deal, "winner": d.winner, "lines": list(d.lines)})
            who = "a standoff" if d.winner < 0 else f"{self.seat(d.winner)} wins it"
            lines = "-".join(str(x) for x in d.lines)
            honours = "-".join(str(x) for x in self.board.honours)
            return [f"deal {d.deal}: {who} with honours {honours}" + (f"; lines {lines}" if lines else "")]
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


WATCH_RPC = "WatchMatch"  # the call; `Remote.error` words a refusal with the command that made it
PAUSES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)  # seconds before each try to open a cut stream again
CUT = ("stream removed", "rst_stream", "socket closed", "connection reset", "broken pipe", "goaway")


def cut(err: Any) -> bool:
    """Whether a failed WatchMatch means the connection went, not a refusal: UNAVAILABLE, or what a
    proxy's dropped stream surfaces as (UNKNOWN "Stream removed", INTERNAL "RST_STREAM")."""
    import grpc

    code = err.code() if callable(getattr(err, "code", None)) else None
    if code == grpc.StatusCode.UNAVAILABLE:
        return True
    details = (err.details() if callable(getattr(err, "details", None)) else "") or ""
    return code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL) and any(
        word in details.lower() for word in CUT
    )


class Seen:
    """The place in the match of the last event shown: a stream opened again repeats the match's kept
    events from the start, and those already shown are skipped, as is a status equal to the last one
    shown. A status of a new attempt (queued again, or another start time) starts over, as the
    server's own stream does."""

    def __init__(self) -> None:
        self.last: tuple[int, int, int] | None = None
        self.started = ""
        self.status = b""  # the last status shown: a new stream repeats it first

    def new(self, ev: Any) -> bool:
        from arena.service.live_feed import event_key

        kind = ev.WhichOneof("event")
        if kind == "status":
            s = ev.status
            if s.status == "queued" or (self.started and s.started_at and s.started_at != self.started):
                self.last = None
            self.started = s.started_at or self.started
            data = s.SerializeToString(deterministic=True)
            same, self.status = data == self.status, data
            return not same
        part = getattr(ev, kind)
        key = event_key({"kind": kind, "deal": part.deal, "trick": getattr(part, "trick", 0)})
        if self.last is not None and key <= self.last:
            return False
        self.last = key
        return True


def follow(server: Remote, number: int) -> Iterator[Any]:
    """The match's events once each, the stream opened again while the match is not over."""
    import grpc

    from arena.proto import arena_pb2 as pb

    seen, tries, over, opened = Seen(), 0, False, False
    while not over:
        shown = False
        try:
            for ev in server.stub.WatchMatch(pb.WatchMatchRequest(match_id=number), metadata=server.metadata):
                opened = True
                over = over or final(ev)
                if seen.new(ev):
                    shown = shown or ev.WhichOneof("event") != "status"
                    yield ev
        except grpc.RpcError as err:
            if not (opened and cut(err)):  # a refusal, or no server at all at the start: its one line
                raise server.error(err, WATCH_RPC, None) from None
        if over:
            return
        tries = 0 if shown else tries + 1  # a stream that showed something new earns a fresh series
        if tries >= len(PAUSES):
            raise ServiceLost(
                f"the connection to the server {server.where.given} was lost while watching match "
                f"{number}; run the same command again to resume"
            )
        click.echo(f"the stream of match {number} was cut; opening it again", err=True)
        time.sleep(PAUSES[tries])


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

    Works for a queued, running or finished match; exits when the match is over and shown. A stream
    cut before then (a server replica stopped, the connection lost) is opened again and followed from
    where it was; exit 3 if it cannot be.
    """
    from google.protobuf.json_format import MessageToDict

    server = need_remote(remote, "watch")
    number = match_id(match)
    table = Table(number)
    last: list[str] = []  # the result line, printed once the last tricks are shown
    try:
        for ev in follow(server, number):
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
