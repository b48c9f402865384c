"""`arena replay show` and `arena replay export`: read binary match records (added to the
`replay` group of arena/cli/replay.py)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena.cli.errors import UserError


def _load(spec: str):
    from arena.proto.codec import RecordError
    from arena.replay.record import ReplayNotFound, load_record

    try:
        return load_record(spec)
    except (ReplayNotFound, RecordError) as exc:
        raise UserError(str(exc)) from None


@click.command()
@click.argument("replay", default="last", metavar="FILE|last")
@click.option("--seat", type=click.IntRange(0, 1), default=None, help="Show only what this seat saw.")
@click.option("--deal", "only_deal", type=click.IntRange(1), default=None, help="Show only this deal.")
def show(replay: str, seat: int | None, only_deal: int | None) -> None:
    """Print a match trick by trick: everything, or as one seat saw it (--seat N).

    FILE is a replay written by `arena play` (default folder var/replays/); `last` is the newest.
    """
    from arena.replay.render import render

    record = _load(replay)
    if only_deal is not None and only_deal > len(record.deals):
        raise UserError(f"--deal {only_deal}: the match has {len(record.deals)} deal(s)")
    click.echo("\n".join(render(record, seat, only_deal)))


@click.command()
@click.argument("replay", default="last", metavar="FILE|last")
@click.option(
    "--json", "as_json", is_flag=True, required=True, help="Write elfern/1 JSON (the only format so far)."
)
@click.option(
    "--out", type=click.Path(dir_okay=False), default=None, help="Write to this file instead of stdout."
)
def export(replay: str, as_json: bool, out: str | None) -> None:
    """Convert a binary replay to elfern/1 JSON, which `arena replay verify` checks."""
    from arena.replay.export import record_to_json

    record = _load(replay)
    text = json.dumps(record_to_json(record), indent=1, ensure_ascii=False)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text)
