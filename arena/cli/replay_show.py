"""`arena replay show` and `arena replay export`: read binary match records (added to the
`replay` group of arena/cli/replay.py), from a file or, with --server, a remote match's GetReplay (read
piece by piece, checked whole: arena/proto/pieces.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import click

from arena.cli.errors import UserError
from arena.cli.remote import Remote, remote_options

PRIVATE_HELP = (
    "With --server: ask for the private record (your own seats' logs and details; needs the token of "
    "a seat's owner, or the admin's)."
)


def _load(spec: str, remote: Remote | None = None, private: bool = False):
    from arena.proto.codec import RecordError, decode_record
    from arena.replay.record import ReplayNotFound, load_record

    if remote is None:
        if private:
            raise UserError("--private asks a server for a private record; give --server (or ARENA_SERVER)")
        try:
            return load_record(spec)
        except (ReplayNotFound, RecordError) as exc:
            raise UserError(str(exc)) from None
    from arena.cli.watch import match_id
    from arena.proto import arena_pb2 as pb
    from arena.proto.pieces import PieceError, reassemble

    number = match_id(spec)

    def piece(offset: int):
        return remote.call("GetReplay", pb.GetReplayRequest(match_id=number, private=private, offset=offset))

    from arena.replay.record import check_record

    try:
        return check_record(decode_record(reassemble(piece)))
    except PieceError as exc:
        raise UserError(
            f"match {number}: the server's pieces of the record do not fit together ({exc})"
        ) from None
    except RecordError as exc:
        raise UserError(f"match {number}: the server sent a record that does not decode ({exc})") from None


@click.command()
@click.argument("replay", default="last", metavar="FILE|last|MATCH")
@click.option("--seat", type=click.IntRange(0, 1), default=None, help="Show only what this seat saw.")
@click.option("--deal", "only_deal", type=click.IntRange(1), default=None, help="Show only this deal.")
@click.option(
    "--logs",
    is_flag=True,
    help="Print the seat's Log lines and its process's stdout/stderr instead (private: your own record).",
)
@click.option("--private", is_flag=True, help=PRIVATE_HELP)
@click.option("--analysis", is_flag=True,
              help="Add the solver's marks: each move that lost honours, its loss and the best card "
              "(as `arena replay analyse`; with --seat, that seat's moves only).")  # fmt: skip
@click.option("--samples", type=click.IntRange(1, 1000), default=16, show_default=True,
              help="With --analysis: phase-1 worlds per move.")  # fmt: skip
@remote_options
def show(
    replay: str,
    seat: int | None,
    only_deal: int | None,
    logs: bool,
    private: bool,
    analysis: bool,
    samples: int,
    remote: Remote | None,
) -> None:
    """Print a match trick by trick: everything, or as one seat saw it (--seat N).

    FILE is a replay written by `arena play` (in $ARENA_HOME/replays/, else ./var/replays/); `last`
    is the newest there, whatever the current directory when ARENA_HOME is set. `--seat N --logs`
    prints what seat N's bot logged and wrote to stdout/stderr (kept capped for every match).
    With --server (ARENA_SERVER), MATCH is a match id on that server (`arena matches` lists them): its
    public record once it and its duplicate twin are over, or with --private your own seats' part.
    """
    from arena.replay.render import render

    record = _load(replay, remote, private)
    if logs:
        from arena.replay.privacy import is_public
        from arena.replay.render import render_logs

        if is_public(record):
            raise UserError(
                f"{replay}: this record carries no logs, output or private details (a public record keeps "
                "none): use your own replay file, or --server with --private and your owner token"
            )
        click.echo("\n".join(render_logs(record, seat)))
        return
    if only_deal is not None and only_deal > len(record.deals):
        raise UserError(f"--deal {only_deal}: the match has {len(record.deals)} deal(s)")
    with _replays(replay):
        lines = render(record, seat, only_deal)
    click.echo("\n".join(lines))
    if analysis:
        from arena.cli.replay_analyse import analysis_lines

        click.echo("")
        with _replays(replay):
            click.echo("\n".join(analysis_lines(record, samples, seat, only_deal)))


@contextlib.contextmanager
def _replays(spec: str) -> Iterator[None]:
    """A record whose fields passed `check_record` but whose plays the engine refuses: one line."""
    from arena.engine.types import EngineError

    try:
        yield
    except (EngineError, ValueError) as exc:
        raise UserError(f"{spec}: the record does not re-simulate: {str(exc)[:200]}") from None


@click.command()
@click.argument("replay", default="last", metavar="FILE|last|MATCH")
@click.option(
    "--json", "as_json", is_flag=True, required=True, help="Write elfern/1 JSON (the only format so far)."
)
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of stdout."
)
@click.option("--private", is_flag=True, help=PRIVATE_HELP)
@remote_options
def export(replay: str, as_json: bool, out: str | None, private: bool, remote: Remote | None) -> None:
    """Convert a binary replay to elfern/1 JSON, which `arena replay verify` checks.

    With --server (ARENA_SERVER), MATCH is a match id on that server, as for `arena replay show`.
    """
    from arena.replay.export import record_to_json

    record = _load(replay, remote, private)
    with _replays(replay):
        text = json.dumps(record_to_json(record), indent=1, ensure_ascii=False)
    if out:
        try:
            Path(out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise UserError(
                f"--out {out}: cannot write ({exc.strerror or exc}); give a file in a folder that exists "
                "and has room"
            ) from None
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text)
