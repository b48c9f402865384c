"""`arena bench`: benchmarks that print figures against a baseline measured in the same run.

Adding one: a benchmark module under arena/bench/ with `run(seconds, progress) -> dict`, and a small
command beside its kind (bench_play.py: the game and the bots; bench_system.py: sandbox, referee,
server; bench_ladder.py: a season's throughput, ratings; bench_figures.py: interval coverage, compare's SPRT; bench_matchmaking.py: the matchmaking rules; bench_startup.py: a bot's start-up until
Join, a stdio bot's seat, and `arena play`'s own process) that calls it and hands
the figures to `bench_report.emit` (see `engine`).
"""

from __future__ import annotations

import click

from arena.cli import (
    bench_env,
    bench_figures,
    bench_ladder,
    bench_matchmaking,
    bench_play,
    bench_scale,
    bench_startup,
    bench_system,
)


@click.group()
def bench() -> None:
    """Benchmarks that print figures against a same-run baseline."""


bench.add_command(bench_play.engine)
bench.add_command(bench_play.strength)
bench.add_command(bench_play.solver)
bench.add_command(bench_env.env)
bench.add_command(bench_system.sandbox)
bench.add_command(bench_system.referee)
bench.add_command(bench_system.serve)
bench.add_command(bench_ladder.ladder)
bench.add_command(bench_startup.startup)
bench.add_command(bench_startup.stdio)
bench.add_command(bench_startup.play)
bench.add_command(bench_ladder.ratings)
bench.add_command(bench_matchmaking.matchmaking)
bench.add_command(bench_scale.scale)
bench.add_command(bench_figures.coverage)
bench.add_command(bench_figures.compare)
