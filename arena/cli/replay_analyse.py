"""`arena replay analyse`: every move of a match valued against best play (docs/analysis.md)."""

from __future__ import annotations

import json
from typing import Any

import click

from arena.cli.errors import UserError


def verified_record(path: str) -> dict[str, Any]:
    """An elfern/1 record (a binary replay is exported to it), re-simulated and checked first."""
    from arena.replay.json_record import RecordFileError
    from arena.replay.verify import RecordFailure, _load_any, replay_json

    try:
        record = _load_any(path)
        replay_json(record)
    except RecordFileError as exc:
        raise UserError(f"{path}: {exc}") from None
    except RecordFailure as exc:
        raise UserError(
            f"{path}: the record does not verify ({exc}); see `arena replay verify {path}`"
        ) from None
    return record


@click.command()
@click.argument("file", default="last", metavar="FILE|last")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the analysis as JSON (schema: docs/analysis.md)."
)
@click.option("--samples", type=click.IntRange(1, 1000), default=16, show_default=True,
              help="Phase 1: worlds sampled from the mover's view per move.")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the phase-1 world sampling.")
def analyse(file: str, as_json: bool, samples: int, seed: int) -> None:
    """Value every move of a match against best play.

    Phase 2 (stock empty) is exact: the solver's value of each legal card, the best cards and the
    honours the move lost. Phase 1 is an estimate from the mover's own view (PIMC over --samples
    worlds, never looking at hidden cards), marked `~` with its spread. FILE is elfern/1 JSON or a
    binary replay (`last`: the newest under var/replays/). Marks: ? lost 1 honour, ?? more.
    """
    from arena.analysis.annotate import annotate_record, text_lines
    from arena.replay.record import ReplayNotFound, resolve

    try:
        path = str(resolve(file))
    except ReplayNotFound as exc:
        raise UserError(str(exc)) from None
    record = verified_record(path)
    result = annotate_record(record, samples=samples, seed=seed)
    if as_json:
        click.echo(json.dumps(result, indent=1))
        return
    seats = record.get("seats") or ["seat 0", "seat 1"]
    deck = (record.get("rules") or {}).get("deck", "french")
    click.echo("\n".join(text_lines(result, [f"{s}[{i}]" for i, s in enumerate(seats)], deck)))


def analysis_lines(
    record: Any, samples: int, seat: int | None = None, only_deal: int | None = None
) -> list[str]:
    """`arena replay show --analysis`: the analysis of a binary record as terminal lines. With `seat`,
    only that seat's moves; with `only_deal` (1-based), only that deal."""
    from arena.analysis.annotate import annotate_record, text_lines
    from arena.engine import EngineError
    from arena.replay.export import record_to_json

    try:
        data = record_to_json(record)
    except (EngineError, ValueError) as exc:
        raise UserError(f"the record does not re-simulate, so it cannot be analysed: {exc}") from None
    result = annotate_record(data, samples=samples)
    if only_deal is not None:
        result["deals"] = [d for d in result["deals"] if d["deal"] == only_deal - 1]
    if seat is not None:
        for d in result["deals"]:
            d["moves"] = [mv for mv in d["moves"] if mv["seat"] == seat]
    names = data.get("seats") or ["seat 0", "seat 1"]
    deck = (data.get("rules") or {}).get("deck", "french")
    return text_lines(result, [f"{n}[{i}]" for i, n in enumerate(names)], deck)
