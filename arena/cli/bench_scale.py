"""`arena bench scale`: synthetic stores at real size (S, M, L, XL) and every read timed against them."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.cli.bench_report import emit, json_option, with_progress
from arena.cli.errors import UserError

if TYPE_CHECKING:
    from arena.bench.scale_ops import Op, Statements

SIZE_HELP = "S: 20 bots / 2k matches, M: 200 / 100k, L: 2,000 / 1M, XL: 10,000 / 10M (XL only when named)."


def _sizes(text: str) -> list:
    from arena.bench.scale_build import Size

    out = []
    for part in (p.strip().upper() for p in text.split(",") if p.strip()):
        if part not in Size.__members__:
            raise UserError(f"--size {part!r} is not a size; use S, M, L or XL, comma-separated (e.g. S,M)")
        out.append(Size(part))
    if not out:
        raise UserError("--size names no size; use S, M, L or XL, comma-separated (e.g. S,M)")
    return out


@click.command("scale")
@click.option("--size", "size_text", default="S", show_default=True, metavar="S,M,L,XL", help=SIZE_HELP)
@click.option(
    "--db",
    type=click.Choice(["sqlite", "postgresql", "both"]),
    default="sqlite",
    show_default=True,
    help="The stores: a SQLite file, a PostgreSQL database of its own on --pg, or both.",
)
@click.option(
    "--pg",
    "pg_server",
    default=None,
    metavar="URL",
    help="The PostgreSQL server the bench creates its databases on (bench_scale_*); default "
    "ARENA_BENCH_PG, else postgresql://postgres@127.0.0.1:5432/postgres.",
)
@click.option(
    "--cache",
    default=None,
    metavar="DIR",
    help="Where built stores are kept and reused (default: $ARENA_HOME/bench-scale).",
)
@click.option("--rebuild", is_flag=True, help="Build the stores again even when a complete one is kept.")
@click.option("--seed", type=click.IntRange(0, 2**62), default=1, show_default=True, help="The stores' seed.")
@click.option(
    "--reps", type=click.IntRange(1, 100), default=5, show_default=True, help="Timed requests per operation."
)
@json_option
def scale(
    size_text: str,
    db: str,
    pg_server: str | None,
    cache: str | None,
    rebuild: bool,
    seed: int,
    reps: int,
    as_json: bool,
) -> None:
    """Build synthetic ladders at real size (owners, bots and versions, a duplicate season, matches in
    pairs with real replays, rating changes, faults, open and sealed matches), keep them, and time
    every public page, JSON route, gRPC read and CLI listing against a real `arena web` and
    `arena serve` on each, plus the ladder's steps (claim, pair, record, refit).

    Per operation: the median of --reps requests, the growth against size S (always measured, the
    baseline), the SQL statements of one request (counted in this process), the reply's bytes and
    the server's RSS, each against its target (docs/deploy.md, "Sizing"). A store is built once per
    size, seed, database and schema revision; later runs reuse it (--rebuild builds it again).
    """
    from arena.bench.scale_build import DEFAULT_PG, DbKind
    from arena.bench.scale_ops import Counters
    from arena.bench.scale_time import run
    from arena.store.db import arena_home

    sizes = _sizes(size_text)
    dbs = [DbKind.SQLITE, DbKind.POSTGRESQL] if db == "both" else [DbKind(db)]
    folder = Path(cache) if cache else arena_home() / "bench-scale"
    server = pg_server or os.environ.get("ARENA_BENCH_PG") or DEFAULT_PG
    if DbKind.POSTGRESQL in dbs:
        from arena.extras import require

        require("postgres", "arena bench scale --db postgresql")

    def work(progress: Callable[[float], None]) -> dict:
        counters = Counters(web=count_web, cli=count_cli)
        return run(sizes, dbs, cache=folder, seed=seed, reps=reps, pg_server=server, rebuild=rebuild,
                   counters=counters, progress=progress)  # fmt: skip

    try:
        result = with_progress("scale benchmark", work, as_json)
    except OSError as exc:
        raise UserError(
            f"arena bench scale: {exc}; check --cache (a folder you can write) and --pg"
        ) from None
    emit(result, as_json, _title(result), rows(result["rows"]), _footer(result))


def _title(result: dict) -> str:
    stores = ", ".join(f"{s['db']} {s['size']} ({s['build_seconds']:g} s to build)" for s in result["stores"])
    return (
        f"scale benchmark, medians of {result['reps']} requests; growth against S of the same store: {stores}"
    )


def _footer(result: dict) -> str:
    over = sum(1 for r in result["rows"] if r["verdict"] == "over")
    return f"{len(result['rows'])} rows, {over} over target"


def rows(figures: list[dict]) -> list[tuple[str, str, str]]:
    """One line per operation, store and size: the median, then growth, statements, bytes, RSS, verdict."""
    out = []
    for r in figures:
        name = f"{r['op']} [{r['db']} {r['size']}]"
        value = f"{r['median_ms']:.1f} ms" if r["median_ms"] is not None else "failed"
        parts = [
            f"x{r['growth']:g} S" if r["growth"] is not None else "",
            f"{r['statements']} stmts" if r["statements"] is not None else "",
            f"{r['bytes'] / 1000:.1f} KB" if r["bytes"] is not None else "",
            f"RSS {r['rss_mib']:.0f} MiB" if r["rss_mib"] is not None else "",
        ]
        verdict = r["verdict"] + (f" ({'; '.join(r['over'])})" if r["over"] else "")
        if r["targets"] and not r["over"]:
            verdict += f" ({'; '.join(r['targets'])})"
        if r["error"]:
            verdict += f": {r['error']}"
        out.append((name, value, ", ".join(p for p in parts if p) + f"  {verdict}"))
    return out


def count_web(statements: Statements, url: str, home: str, ops: list[Op]) -> dict[str, int | None]:
    """Each web op's statements, through the same app in this process (Starlette's test client)."""
    import warnings

    from arena.bench.scale_ops import twice
    from arena.web.app import create_app

    with warnings.catch_warnings():  # Starlette's note about its client's HTTP library; nothing to act on
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    app = create_app(url, home)
    out: dict[str, int | None] = {}
    try:
        with TestClient(app) as client:
            for op in ops:
                out[op.name] = twice(statements, lambda op=op: client.get(op.target))  # type: ignore[misc]
    finally:
        app.state.data.store.close()
    return out


def count_cli(statements: Statements, env: dict[str, str], ops: list[Op]) -> dict[str, int | None]:
    """Each CLI listing's statements, through click's runner in this process."""
    from click.testing import CliRunner

    from arena.bench.scale_ops import twice
    from arena.cli import cli

    runner = CliRunner(env=env)
    return {op.name: twice(statements, lambda op=op: runner.invoke(cli, op.target.split())) for op in ops}  # type: ignore[misc]
