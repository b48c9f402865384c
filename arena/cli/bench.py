"""`arena bench`: benchmarks that print figures against a baseline measured in the same run.

Adding one: a benchmark module under arena/bench/ with `run(seconds, progress) -> dict`, and here a
small command that calls it and hands the figures to `emit` (see `engine` below).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import click


@click.group()
def bench() -> None:
    """Benchmarks that print figures against a same-run baseline."""


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


@bench.command("engine")
@click.option("--seconds", type=click.FloatRange(0.2, 600), default=3.0, show_default=True,
              help="CPU seconds to spend in total, shared by the variants.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def engine(seconds: float, as_json: bool) -> None:
    """Random legal deals per second: the engine against a list-based baseline, on one core.

    Times, in the same run and interleaved: the baseline (arena/bench/baseline.py, card by card),
    the engine card by card (Deal.play), the engine's playout loop (Deal.playout), the seeded
    shuffle, and the solver's compiled core playing whole random deals (set against the ~1.8 million
    deals/s/core of a C bitmask engine). Target: the engine at least 3x the baseline.
    """
    from arena.bench.engine import TARGET, run

    r = with_progress("engine benchmark", lambda progress: run(seconds, progress=progress), as_json)
    best = max(r["engine_vs_baseline"], r["playout_vs_baseline"])
    emit(
        r,
        as_json,
        f"engine benchmark: random legal deals, {r['rules']}, one core, {r['cpu_seconds']} CPU s",
        [
            ("baseline  list-based, card by card", f"{r['baseline_deals_per_s']:,} deals/s", ""),
            (
                "engine    Deal.play, card by card",
                f"{r['engine_deals_per_s']:,} deals/s",
                f"{r['engine_vs_baseline']}x baseline",
            ),
            (
                "engine    Deal.playout",
                f"{r['engine_playout_deals_per_s']:,} deals/s",
                f"{r['playout_vs_baseline']}x baseline",
            ),
            ("engine    seeded shuffle (deal_deck)", f"{r['seeded_shuffles_per_s']:,} decks/s", ""),
            (
                "core      compiled playout, with shuffle",
                f"{r['core_playout_deals_per_s']:,} deals/s"
                if r["core_playout_deals_per_s"]
                else "not built",
                f"{r['core_vs_c_reference']}x the ~{r['c_reference_deals_per_s']:,}/s of a C bitmask engine"
                if r["core_playout_deals_per_s"]
                else "run `python scripts/build_core.py` (make setup does)",
            ),
        ],  # fmt: skip
        f"target {TARGET}x baseline: {'met' if best >= TARGET else 'NOT met'} (best {best}x)",
    )


@bench.command("strength")
@click.option("--deals", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Duplicate deals per bot (each played twice, seats swapped).")  # fmt: skip
@click.option("--bots", "names", default=None, metavar="NAME,...",
              help="Python sample bots (folders of sample_bots/python); default: random, greedy, tactician, "
                   "pimc, ismcts.")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the deals.")
@click.option("--rules", "rules", multiple=True, metavar="K=V", help="Rules option(s), e.g. trumps=true.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def strength(deals: int, names: str | None, seed: int, rules: tuple[str, ...], as_json: bool) -> None:
    """Each sample bot's honours margin per deal against the omniscient oracle, on the same duplicate deals.

    The oracle sees both hands and the stock (arena/bench/oracle.py; a yardstick, never a season
    entrant). Each bot plays every deal twice against it, once from each seat, in-process on the
    referee's own turn messages. Baseline, in the same run: tactician's gap to the oracle; `closed` is
    the share of that gap a bot closes (target for the best search bot: at least 0.5).
    """
    from arena.bench.strength import SAMPLE_BOTS, run
    from arena.engine import Rules, RulesError

    try:
        the_rules = Rules.from_pairs(rules)
    except RulesError as exc:
        raise click.UsageError(str(exc)) from None
    bots = SAMPLE_BOTS if names is None else tuple(n.strip() for n in names.split(",") if n.strip())
    try:
        r = with_progress(
            "strength benchmark",
            lambda progress: run(bots, deals, seed, the_rules, progress=progress),
            as_json,
        )
    except (FileNotFoundError, TypeError) as exc:
        raise click.UsageError(str(exc)) from None
    rows = [
        (
            name,
            f"{row['margin']:+.2f}" + ("" if row["ci95"] is None else f" ±{row['ci95']:.2f}"),
            "" if row["closed"] is None else f"closes {row['closed']:.0%} of {r['baseline']}'s gap",
        )
        for name, row in r["bots"].items()
    ]
    emit(
        r,
        as_json,
        f"strength benchmark: honours margin per deal against the oracle, {deals} duplicate deals, "
        f"rules {r['rules']}, seed {seed}",
        rows,
        "margin: the bot's honours minus the oracle's, per deal (95% interval over the duplicate pairs)",
    )


@bench.command("sandbox")
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
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def sandbox(rounds: int, deals: int, as_json: bool) -> None:
    """Launch overhead of each available launcher against a bare process start, and the time a bot
    is charged per move with 1 and 2 concurrent matches, without and with pausing the idle bot.

    See docs/sandbox.md for what the figures mean and why the arena pauses the bot not on move.
    """
    from arena.bench.sandbox import run

    def work(progress: Callable[[float], None]) -> dict:
        return run(rounds, deals, lambda part, f: progress(f / 2 if part == "launch" else 0.5 + f / 2))

    r = with_progress("sandbox benchmark", work, as_json)
    rows = []
    for program in ("pass", "import grpc, arena.sdk"):
        figures = r["launch"][program]
        bare = figures["bare"]["median_ms"]
        rows.append((f"{program}: bare process", f"{bare:.1f} ms", "baseline"))
        for name in r["launch"]["launchers"]:
            f = figures[name]
            rows.append(
                (
                    f"{program}: {name}",
                    f"{f['median_ms']:.1f} ms",
                    f"+{f['overhead_ms']:.1f} ms ({f['ratio']:.2f}x bare)",
                )
            )
    for name, ms in r["launch"]["cleanup_ms"].items():
        rows.append((f"kill + cleanup: {name}", f"{ms:.1f} ms", ""))
    for c in r["fair_clocks"]:
        label = f"charged/move: vs {c['opponent']}, {c['matches']} match(es), pause {'on' if c['pause_idle'] else 'off'}"
        note = f"CPU used {c['cpu_ms']:.1f} ms (work {c['work_ms']} ms), load {c['loadavg']:.1f}" + (
            f"; verdicts {c['verdicts_not_ok']}" if c["verdicts_not_ok"] else ""
        )
        rows.append((label, f"{c['charged_ms']:.1f} ms", note))
    emit(
        r,
        as_json,
        f"sandbox benchmark: medians of {rounds} launches; fair clocks over {deals} deal(s) per match",
        rows,
    )


@bench.command("referee")
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
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def referee(rounds: int, deals: int, as_json: bool) -> None:
    """The referee's per-move round trip with two trivial bots against a bare gRPC ping-pong of
    same-size messages over the same kind of Unix socket, measured in the same run.

    Target: the referee adds at most 25% over the bare round trip. See arena/bench/referee.py.
    """
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


@bench.command("serve")
@click.option(
    "--matches", type=click.IntRange(1, 1_000_000), default=20_000, show_default=True,
    help="Short matches (one deal) to play through CreateMatch.",
)  # fmt: skip
@click.option(
    "--baseline", type=click.IntRange(1), default=1000, show_default=True,
    help="The RSS after this many matches is the same-run baseline.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def serve(matches: int, baseline: int, as_json: bool) -> None:
    """Memory of a long-running `arena serve`: plays N short matches through its CreateMatch (two
    first-legal seats over gRPC) and prints the server's RSS before, after the first --baseline
    matches (the baseline), at the peak and after all. Target: within 10% of the baseline after
    20,000 matches. See arena/bench/serve.py.
    """
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


@bench.command("ladder")
@click.option(
    "--matches",
    type=click.IntRange(2, 500),
    default=20,
    show_default=True,
    help="Matches per measurement (baseline, concurrency 1, concurrency 2).",
)
@click.option(
    "--sandbox", "launcher", default=None, help="Launcher (default: bwrap when it runs here, else local)."
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def ladder(matches: int, launcher: str | None, as_json: bool) -> None:
    """Matches per minute of a season of the sample Python bots at concurrency 1 and 2.

    Baseline, in the same run: the same number of matches through `play_match` directly, one at a
    time, with no store, matchmaking or pool.
    """
    from arena.bench.ladder import run_ladder
    from arena.workers.execute import bwrap_available

    launcher = launcher or ("bwrap" if bwrap_available() else "local")
    r = with_progress("ladder benchmark", lambda progress: run_ladder(matches, launcher, progress), as_json)
    emit(
        r,
        as_json,
        f"ladder benchmark: {r['matches']} matches each, bots {', '.join(r['bots'])}, {r['launcher']} sandbox, "
        f"{r['cores']} cores",
        [
            ("baseline  play_match in a loop", f"{r['baseline_matches_per_min']} matches/min", ""),
            (
                "ladder    concurrency 1",
                f"{r['ladder_c1_matches_per_min']} matches/min",
                f"{r['c1_vs_baseline']}x baseline",
            ),
            (
                "ladder    concurrency 2",
                f"{r['ladder_c2_matches_per_min']} matches/min",
                f"{r['c2_vs_c1']}x c1",
            ),
        ],  # fmt: skip
    )


@bench.command("ratings")
@click.option("--bots", type=click.IntRange(2, 2000), default=200, show_default=True)
@click.option("--matches", type=click.IntRange(10, 10_000_000), default=100_000, show_default=True)
@click.option("--large/--no-large", default=True, show_default=True, help="Also the 2,000-bot, 1M-game fit.")
@click.option(
    "--spread/--no-spread", default=True, show_default=True, help="Also the live-Elo spread simulation."
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def ratings(bots: int, matches: int, large: bool, spread: bool, as_json: bool) -> None:
    """Time to fit season ratings (ML Bradley-Terry with intervals) against a naive iterative fit.

    Baseline, in the same run: the classic minorisation-maximisation iteration over the match list
    in plain Python, to the same data. Target: the fit for 100,000 matches among 200 bots < 2 s.
    Then the steadiness of repeated small fits (one BLAS thread); unless --no-large, the 2,000-bot,
    1M-game fit alone and with 20 new unrated entries (median of 3 each, with its Newton iterations;
    target < 2 s; baseline: the old pseudo-inverse covariance step alone); unless --no-spread, live Elo's spread against the true
    one after 4,000 games per bot, paired on the fit against paired on live Elo.
    """
    from arena.bench.ladder import run_ratings
    from arena.bench.ratings import run_all

    def work(progress: Callable[[float], None]) -> dict:
        r = run_ratings(bots, matches, progress=lambda f: progress(f / 2))
        r.update(run_all(lambda f: progress(0.5 + f / 2), large, spread, bots, matches))
        return r

    r = with_progress("ratings benchmark", work, as_json)
    st = r["steadiness"]
    rows = [
        ("baseline  MM iteration, plain Python", f"{r['naive_s']} s", f"{r['naive_iterations']} iterations"),
        (
            "fit       Newton + covariance (numpy)",
            f"{r['fit_s']} s",
            f"{r['speedup']}x faster, {r['fit_newton_iterations']} iterations",
        ),
        ("agreement max |fit - baseline|", f"{r['max_abs_diff_elo']} Elo", ""),
        ("accuracy  RMSE vs true strengths", f"{r['rmse_vs_true_elo']} Elo", f"mean ±95% {r['mean_ci95_elo']}"),
        (
            f"steadiness {st['runs']} fits min/median/max",
            f"{st['min_s']} / {st['median_s']} / {st['max_s']} s",
            "one BLAS thread",
        ),
    ]  # fmt: skip
    footer = f"target < {r['target_s']} s: {'met' if r['target_met'] else 'NOT met'}"
    if "large" in r:
        g = r["large"]
        rows += [
            (
                f"large     {g['bots']:,} bots, {g['matches']:,} matches",
                f"{g['fit_s']} s",
                f"{g['iterations']} iterations; median of {g['runs']}, range {'-'.join(map(str, g['fit_min_max_s']))} s",
            ),
            (
                f"large     + {g['unrated']} unrated entries",
                f"{g['fit_with_unrated_s']} s",
                f"{g['iterations_with_unrated']} iterations, others unchanged: {g['unrated_change_nothing']}; "
                f"range {'-'.join(map(str, g['fit_with_unrated_min_max_s']))} s",
            ),
            ("baseline  old pseudo-inverse step alone", f"{g['baseline_pinv_s']} s", "same matrix"),
        ]  # fmt: skip
        footer += f"; large fit < {g['target_s']} s: {'met' if g['target_met'] else 'NOT met'}"
    if "spread" in r:
        p = r["spread"]
        rows.append(
            (
                f"live spread/true, {p['bots']} bots x {p['games_per_bot']:,} games",
                f"{p['spread_ratio_fit_paired']}",
                f"paired on the fit; on live Elo {p['spread_ratio_live_paired']}",
            )
        )
        footer += f"; live spread within 10%: {'met' if p['target_met'] else 'NOT met'}"
    emit(r, as_json, f"ratings benchmark: {r['matches']:,} matches among {r['bots']} bots", rows, footer)


@bench.command("solver")
@click.option("--positions", type=click.IntRange(10, 100_000), default=400, show_default=True,
              help="Fresh 6-card endgames to solve (the same ones for every variant).")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the random endgames.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as one JSON object.")
def solver(positions: int, seed: int, as_json: bool) -> None:
    """Exact phase-2 solves per second: the solver against a plain minimax on the same positions.

    Times the solver (alpha-beta with a transposition table) with the compiled core and in pure
    Python, and the plain minimax (no pruning, no table) of each core as the baseline, interleaved
    on the same fresh 6-card endgames; every answer is checked against the minimax's. Target: a
    median of at most 1 ms per position. See arena/bench/solver.py.
    """
    from arena.bench.solver import run

    r = with_progress("solver benchmark", lambda progress: run(positions, seed, progress), as_json)
    labels = {
        "solver_c": ("solver    compiled core", "solver_vs_minimax_c"),
        "minimax_c": ("minimax   compiled core (baseline)", None),
        "solver_python": ("solver    pure Python", "solver_vs_minimax_python"),
        "minimax_python": ("minimax   pure Python (baseline)", None),
    }
    rows = []
    for name, f in r["variants"].items():
        label, ratio = labels[name]
        note = f"median {f['median_ms']:.3f} ms, p90 {f['p90_ms']:.3f} ms, {f['positions']} positions"
        if ratio and r[ratio] is not None:
            note += f"; {r[ratio]}x its minimax"
        rows.append((label, f"{f['positions_per_s']:,.0f} positions/s", note))
    if not r["compiled_core"]:
        rows.append(("compiled core", "not built", "run `python scripts/build_core.py` (make setup does)"))
    emit(
        r,
        as_json,
        f"solver benchmark: {r['kind']}, one core, CPU time",
        rows,
        f"answers that differ from the minimax: {r['disagreements']}; target median <= {r['target_median_ms']} ms: "
        f"{'met' if r['met'] else 'NOT met'} ({r['median_ms']:.3f} ms)",
    )
