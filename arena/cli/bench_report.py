"""How every `arena bench` command reports: a progress bar on stderr while it runs, then its figures
as aligned rows, or as one JSON object with --json."""

from __future__ import annotations

import json
from collections.abc import Callable

import click


def with_progress(task: str, work: Callable[[Callable[[float], None]], dict], quiet: bool) -> dict:
    """Run `work(progress)` under a transient rich progress bar on stderr (none when `quiet`)."""
    if quiet:
        return work(lambda fraction: None)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), transient=True,
    ) as bar:  # fmt: skip
        tid = bar.add_task(task, total=1.0)
        return work(lambda fraction: bar.update(tid, completed=fraction))


def emit(result: dict, as_json: bool, title: str, rows: list[tuple[str, str, str]], footer: str = "") -> None:
    """Print the figures: a JSON object with --json, else a title, aligned rows and a footer."""
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    click.echo(title)
    width = max(len(r[0]) for r in rows)
    figure = max(len(r[1]) for r in rows)
    for name, value, note in rows:
        click.echo(f"  {name.ljust(width)}  {value.rjust(figure)}  {note}".rstrip())
    if footer:
        click.echo(footer)


#: The --json flag every bench command takes.
json_option = click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
