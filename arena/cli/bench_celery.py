"""`arena bench ladder --executor celery`: runs arena/bench/ladder_celery.py and prints its figures."""

from __future__ import annotations

import click

from arena.cli.bench_report import emit, with_progress
from arena.cli.errors import UserError


def celery_ladder(matches: int, launcher: str, concurrency: int, as_json: bool) -> None:
    from arena.bench.ladder_celery import run_ladder_celery
    from arena.cli.ladder_common import executor_factory

    executor_factory("celery")  # the extra and a reachable broker, else one line naming what is wrong
    try:
        r = with_progress(
            "celery ladder benchmark",
            lambda progress: run_ladder_celery(matches, concurrency, launcher, progress),
            as_json,
        )
    except RuntimeError as exc:
        raise UserError(str(exc)) from None

    def rows(tag: str, m: dict) -> list[tuple[str, str, str]]:
        store = (
            f"; store: {m['pg_commits_per_match']} commits (all clients)"
            if "pg_commits_per_match" in m
            else ""
        )
        return [
            (f"{tag} concurrency {concurrency}", f"{m['matches_per_min']} matches/min", ""),
            (
                f"  {tag}: the runner's statements",
                f"{m['runner_statements_per_match']} /match",
                store.lstrip("; "),
            ),
            (
                f"  {tag}: the broker (Redis)",
                f"{m['redis_commands_per_match']} cmd/match",
                f"{m['redis_kib_in_per_match']} KiB in, {m['redis_kib_out_per_match']} KiB out per match",
            ),
        ]

    emit(
        r,
        as_json,
        f"celery ladder benchmark: {r['matches']} matches each, bots {', '.join(r['bots'])}, {r['launcher']} "
        f"sandbox, store {r['store']}, broker {r['broker']}",
        [*rows("local pool", r["local"]), *rows("celery", r["celery"])],
        f"celery vs local pool: {r['celery_vs_local']}x",
    )
    if not as_json:
        click.echo("  (the local pool plays here; the Celery workers wherever they run)")
