"""`arena bench` for the system around the game: the sandbox's launch, the referee's round trip and
the server's memory (a season's throughput and the ratings fit: bench_ladder.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from arena.cli.bench_load import load_options, run_load
from arena.cli.bench_report import emit, json_option, with_progress
from arena.cli.bench_streams import run_connections, run_streams, stream_options


@click.command("sandbox")
@click.option(
    "--rounds",
    type=click.IntRange(1, 200),
    default=10,
    show_default=True,
    help="Launches per launcher and program (medians are printed).",
)
@click.option(
    "--deals",
    type=click.IntRange(1, 50),
    default=2,
    show_default=True,
    help="Deals per match in the fair-clock scenarios.",
)
@click.option(
    "--chain-rounds",
    type=click.IntRange(1, 1000),
    default=30,
    show_default=True,
    help="Rounds of the launch chain's phase table (every variant once per round; medians printed).",
)
@click.option("--chain-only", is_flag=True, help="Only the launch chain's phase table (about 30 s).")
@json_option
def sandbox(rounds: int, deals: int, chain_rounds: int, chain_only: bool, as_json: bool) -> None:
    """Where a bwrap launch's time goes, step by step, against a bare fork+exec and bwrap alone
    (targets: the launch at most 2x bwrap alone, at most +5 ms of CPU over a bare start), and a warm
    launch of a Python bot (a zygote's fork, where the warm start runs) and a cold one in the same rounds; launch
    overhead of each available launcher against a bare process start, the time a bot is charged
    per move with 1 and 2 concurrent matches by how the idle bot is paused (never, on every move as
    before, once it pondered as now), and the CPU per move each of those pause modes costs.

    See docs/sandbox.md for what the figures mean and why the arena pauses the bot not on move.
    Each language's start-up until Join, and its build: `arena bench startup --languages`.
    """
    from arena.bench import launch_chain
    from arena.bench.sandbox import run

    def work(progress: Callable[[float], None]) -> dict:
        share = {"chain": (0.0, 0.2), "launch": (0.2, 0.3), "clocks": (0.5, 0.3), "cost": (0.8, 0.2)}
        if chain_only:
            share["chain"] = (0.0, 1.0)
        return run(
            rounds,
            deals,
            lambda part, f: progress(share[part][0] + share[part][1] * f),
            chain_rounds=chain_rounds,
            chain_only=chain_only,
        )

    r = with_progress("sandbox benchmark", work, as_json)
    chain = r["chain"]
    title = (
        f"sandbox benchmark: a bwrap launch of /usr/bin/true, CPU (every process of it, bwrap's pid namespace "
        f"included) and wall, medians of {chain_rounds} rounds, load {chain['load']:.1f}"
    )
    if chain_only:
        emit(r, as_json, title, launch_chain.rows(chain))
        return
    rows = launch_chain.rows(chain)
    for program in ("pass", "import grpc, arena.sdk"):
        figures = r["launch"][program]
        bare = figures["bare"]
        rows.append(
            (
                f"{program}: bare process",
                f"{bare['median_ms']:.1f} ms",
                f"baseline; CPU {bare['cpu_ms']:.1f} ms",
            )
        )
        for name in r["launch"]["launchers"]:
            f = figures[name]
            rows.append(
                (
                    f"{program}: {name}",
                    f"{f['median_ms']:.1f} ms",
                    f"{f['overhead_ms']:+.1f} ms ({f['ratio']:.2f}x bare); "
                    f"CPU {f['cpu_ms']:.1f} ms ({f['cpu_overhead_ms']:+.1f} ms)",
                )
            )
    for name, ms in r["launch"]["cleanup_ms"].items():
        rows.append((f"kill + cleanup: {name}", f"{ms:.1f} ms", ""))
    for c in r["fair_clocks"]:
        label = f"charged/move: vs {c['opponent']}, {c['matches']} match(es), pause {c['pause']}"
        note = f"CPU used {c['cpu_ms']:.1f} ms (work {c['work_ms']} ms), load {c['loadavg']:.1f}" + (
            f"; verdicts {c['verdicts_not_ok']}" if c["verdicts_not_ok"] else ""
        )
        rows.append((label, f"{c['charged_ms']:.1f} ms", note))
    cost = r["pause_cost"]
    for mode, m in cost["pairs"].items():
        what = "watched (now)" if mode == "watch" else "SIGSTOP/SIGCONT (before)"
        rows.append((f"CPU per pause+resume, waiting bot, {what}", f"{m['referee_us'] + m['bot_us']:.1f} us",
                     f"referee {m['referee_us']} us, bot {m['bot_us']} us"))  # fmt: skip
    for mode, m in cost["modes"].items():
        rows.append(
            (
                f"CPU/move, random vs random, pause {mode}",
                f"{m['total_us']} us",
                ("baseline" if mode == "off" else f"{m['over_off_us']:+d} us")
                + f"; referee {m['referee_us']} us, bots {m['bots_us']} us",
            )
        )
    emit(
        r,
        as_json,
        f"{title}; then medians of {rounds} launches; fair clocks over {deals} deal(s) per match",
        rows,
    )


@click.command("referee")
@click.option(
    "--rounds",
    type=click.IntRange(1, 100),
    default=11,
    show_default=True,
    help="Baseline/referee pairs, interleaved (medians are printed).",
)
@click.option(
    "--deals",
    type=click.IntRange(1, 200),
    default=10,
    show_default=True,
    help="Deals per referee match (32 moves each); the baseline does as many round trips.",
)
@click.option(
    "--instructions",
    is_flag=True,
    help="Count instructions instead (valgrind's callgrind; a few minutes): the referee's per move "
    "against the echo's per round trip, steady under any load. --deals is the long run, half of it the short.",
)
@json_option
def referee(rounds: int, deals: int, instructions: bool, as_json: bool) -> None:
    """The referee's per-move round trip with two trivial bots against a bare gRPC ping-pong of
    same-size messages over the same kind of Unix socket, measured in the same run.

    Target: the referee adds at most 25% over the bare round trip. See arena/bench/referee.py.
    With --instructions: what one more move costs each side in instructions, which do not depend
    on the load (arena/bench/referee_instructions.py).
    """
    if instructions:
        _referee_instructions(deals, as_json)
        return
    from arena.bench.referee import run

    r = with_progress("referee benchmark", lambda progress: run(rounds, deals, progress), as_json)
    rows = [
        ("bare gRPC ping-pong, per round trip", f"{r['baseline_ms_per_round_trip']:.3f} ms",
         f"server CPU {r['baseline_cpu_us_per_round_trip']} us"),
        ("referee, per move (2 trivial bots)", f"{r['referee_ms_per_move']:.3f} ms",
         f"referee CPU {r['referee_cpu_us_per_move']} us"),
        ("ratio (medians)", f"{r['ratio']:.2f}x",
         f"paired rounds: median {r['median_paired_ratio']:.2f}x, middle half "
         f"{r['paired_ratio_quartiles'][0]:.2f}-{r['paired_ratio_quartiles'][1]:.2f}x; "
         f"best rounds: {r['best_ratio']:.2f}x"),
        ("referee loop CPU beyond the echo's", f"{r['referee_extra_cpu_us_per_move']} us", "per move"),
    ]  # fmt: skip
    emit(r, as_json,
         f"referee benchmark: {rounds} rounds of {r['moves_per_round']} moves, TurnRequest {r['turn_request_bytes']} B, "
         f"load average {r['load_average'][0]}", rows,
         f"target <= {r['target_ratio']}x: {'met' if r['met'] else 'NOT met'}")  # fmt: skip


def _referee_instructions(deals: int, as_json: bool) -> None:
    from arena.bench import referee_instructions

    why = referee_instructions.available()
    if why is not None:
        raise click.ClickException(f"--instructions needs valgrind: {why}")
    short = max(1, deals // 2)
    if short == deals:
        raise click.UsageError("--instructions needs --deals 2 or more (the short run plays half as many)")
    r = with_progress("counting instructions", lambda p: referee_instructions.run(short, deals, p), as_json)
    rows = [
        ("bare gRPC echo, per round trip", f"{r['echo_per_round_trip'] / 1000:.1f}k", "baseline"),
        ("referee, per move (2 trivial bots)", f"{r['referee_per_move'] / 1000:.1f}k", f"{r['ratio']:.2f}x the echo"),
    ]  # fmt: skip
    emit(r, as_json,
         f"referee benchmark, instructions of the referee loop's thread (callgrind): {short} and {deals} deals, "
         f"the difference over {r['moves']} moves", rows)  # fmt: skip


@click.command("serve")
@click.option(
    "--matches", type=click.IntRange(1, 1_000_000), default=20_000, show_default=True,
    help="Short matches (one deal) to play through CreateMatch.",
)  # fmt: skip
@click.option(
    "--baseline", type=click.IntRange(1), default=1000, show_default=True,
    help="The RSS after this many matches is the same-run baseline.",
)  # fmt: skip
@load_options
@stream_options
@json_option
def serve(
    matches: int,
    baseline: int,
    as_json: bool,
    load: bool,
    streams: int,
    deals: int,
    connections: int,
    idle: float,
    **plan: Any,
) -> None:
    """Memory of a long-running `arena serve`: plays N short matches through its CreateMatch (two
    first-legal seats over gRPC) and prints the server's RSS before, after the first --baseline
    matches (the baseline), at the peak and after all. Target: within 10% of the baseline after
    20,000 matches. See arena/bench/serve.py.

    With --load instead: a server playing a ladder season, first alone (the baseline), then under
    spectators, owners and one hostile owner at its limits for as long again; p50/p99 per call,
    errors, the ladder's rate against the baseline and the server's RSS (arena/bench/serve_load.py).

    With --streams N instead: N live streams of one long match, the server's RSS over idle (target
    within 50 MiB) and the time from SIGTERM to its exit (arena/bench/serve_streams.py).

    With --connections N instead: N idle gRPC connections, the server's RSS over idle and the time
    until it has closed them all (arena/bench/serve_connections.py).
    """
    if connections:
        run_connections(connections, idle, as_json)
        return
    if streams:
        run_streams(streams, deals, as_json)
        return
    if load:
        run_load(plan, as_json)
        return
    from arena.bench.serve import run

    r = with_progress("serve benchmark", lambda progress: run(matches, baseline, progress=progress), as_json)
    rows = [
        ("RSS before any match", f"{r['rss_before_mib']} MiB", ""),
        (f"RSS after {r['baseline_matches']:,} matches", f"{r['rss_baseline_mib']} MiB", "the baseline"),
        ("RSS at the peak", f"{r['rss_peak_mib']} MiB", ""),
        (f"RSS after {r['matches']:,} matches", f"{r['rss_after_mib']} MiB",
         f"{(r['growth'] - 1) * 100:+.1f}% vs the baseline"),
    ]  # fmt: skip
    emit(r, as_json,
         f"serve benchmark: {r['matches']:,} one-deal matches through CreateMatch, "
         f"{r['matches_per_second']} matches/s, {r['replays_written']:,} replays written", rows,
         f"target <= +{(r['target'] - 1) * 100:.0f}%: {'met' if r['met'] else 'NOT met'}")  # fmt: skip
