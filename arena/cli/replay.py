"""`arena replay`: check match records (`verify`, here). Other subcommands (show, export) live in their
own modules and are attached at the end of this file with `replay.add_command(...)`."""

from __future__ import annotations

import click


@click.group()
def replay() -> None:
    """Verify, show, export and analyse match records.

    Records in elfern/1 JSON can be written by hand (docs/records.md) and checked with `verify`.
    """


@replay.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True, path_type=str))
def verify(files: tuple[str, ...]) -> None:
    """Re-simulate elfern/1 JSON records (or binary replays) and check every deck, card, dealer,
    result and the deck commitment.

    Prints `FILE: ok` or `FILE: FAIL deal <n>, play <k>: <reason>` per file (deals and plays are
    numbered from 1). Exits 0 only if every file is ok, else 1.
    """
    from arena.replay.verify import verify_file

    failed = 0
    for path in files:
        ok, line = verify_file(path)
        click.echo(line)
        failed += not ok
    if failed:
        raise SystemExit(1)


from arena.cli.replay_analyse import analyse  # noqa: E402  (solver annotations)
from arena.cli.replay_show import export, show  # noqa: E402  (binary replays: show, export --json)

replay.add_command(show)
replay.add_command(export)
replay.add_command(analyse)
