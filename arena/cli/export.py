"""`arena export dataset`: a season's revealed matches as training data, one row per move
(arena/env/dataset.py, docs/training.md "Datasets")."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import open_store, user_errors
from arena.cli.remote import store_only

FORMATS = ("parquet", "jsonl")


@click.group()
def export() -> None:
    """Export the store's data for other tools (organiser, local store)."""


@export.command("dataset")
@click.argument("season")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="parquet", show_default=True,
              help="Parquet (one row group per 8,192 moves) or JSON lines.")  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The file to write (default: SEASON-moves.parquet or .jsonl here).")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print what was written as one JSON object.")
def dataset(season: str, fmt: str, out: Path | None, as_json: bool) -> None:
    """One row per card played in SEASON's revealed matches: the mover's view, its legal cards, the card,
    the deal's and the match's outcome, the bots' registered names and versions. Schema: docs/training.md.
    """
    from arena.env.dataset import SCHEMA_VERSION, Format, season_rows, write
    from arena.extras import MissingExtra

    store_only("export dataset")
    if fmt == "parquet":
        try:
            importlib.import_module("pyarrow.parquet")  # the rl extra
        except ImportError as exc:
            raise MissingExtra("rl", "arena export dataset --format parquet", "pyarrow") from exc
    path = out or Path(f"{season}-moves.{fmt}")
    if path.exists() and path.is_dir():
        raise UserError(f"--out {path} is a folder; name a file, e.g. --out {path / f'{season}-moves.{fmt}'}")
    store = open_store()
    with user_errors():
        store.season(season)  # an unknown season: one line naming it, before any file is made
        done = write(season_rows(store, season), path, Format(fmt))
    summary = {"season": season, "file": str(path), "format": fmt, "schema_version": SCHEMA_VERSION,
               "matches": done.matches, "rows": done.rows}  # fmt: skip
    if as_json:
        click.echo(json.dumps(summary))
    else:
        click.echo(
            f"{done.rows:,} moves of {done.matches:,} revealed matches in {path} (schema {SCHEMA_VERSION})"
        )
