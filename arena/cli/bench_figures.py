"""`arena bench` for the figures the ladder shows: the intervals' coverage (`coverage`) and the SPRT
of `arena compare` at the user's own settings (`compare`)."""

from __future__ import annotations

import click

from arena.cli.bench_report import emit, json_option, with_progress


@click.command("coverage")
@click.option(
    "--seasons",
    type=click.IntRange(1, 10_000),
    default=200,
    show_default=True,
    help="Simulated seasons of each kind of ladder.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulations.")
@json_option
def coverage(seasons: int, seed: int, as_json: bool) -> None:
    """How often the season fit's 95% intervals hold the true ratings: overall, at the extremes (the
    strongest and weakest 10% of bots) and in the middle, on sparse, wide and ordinary simulated
    ladders (opponents from the whole field). Baseline, in the same run on the same fits: the normal
    interval without the widening by the prior's pull. Target: 93-97% at the extremes."""
    from arena.bench.coverage import run_coverage_bench

    r = with_progress("coverage benchmark", lambda p: run_coverage_bench(seasons, p, seed), as_json)
    rows = []
    for c in r["ladders"]:
        rows.append(
            (
                f"{c['ladder']:<8} {c['bots']} bots x {c['games_per_bot']} games, sd {c['sd']:g}",
                f"{c['widened_ext']:.3f}",
                f"extremes as shown (normal {c['normal_ext']:.3f}); all {c['widened_all']:.3f} "
                f"(normal {c['normal_all']:.3f}), middle {c['widened_mid']:.3f}; "
                f"{c['extreme_cases']:,} extreme cases, per-season sd {c['extremes_per_season_sd']}",
            )
        )
    emit(r, as_json, f"interval coverage: {seasons} seasons of each ladder", rows, f"target: {r['target']}")


@click.command("compare")
@click.option("--elo0", type=float, default=0.0, show_default=True, help="H0: A is this many Elo better.")
@click.option("--elo1", type=float, default=30.0, show_default=True, help="H1: A is this many Elo better.")
@click.option(
    "--alpha", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True, help="Nominal α."
)
@click.option(
    "--beta", type=click.FloatRange(0.0001, 0.5), default=0.05, show_default=True, help="Nominal β."
)
@click.option(
    "--max-pairs", type=click.IntRange(1), default=2000, show_default=True, help="As arena compare."
)
@click.option(
    "--format", "fmt", default=None, metavar="flags=N|deals=N", help="Match format, as arena compare."
)
@click.option(
    "--draws",
    type=click.FloatRange(0.0, 0.9),
    default=None,
    help="Share of drawn games (default: 0 for flags=N, which cannot draw; 0.1 for deals=N).",
)
@click.option(
    "--deck-luck",
    type=click.FloatRange(0.0, 0.9),
    default=0.3,
    show_default=True,
    help="Share of pairs the decks decide (each seat wins its game: the pair scores 1 of 2).",
)
@click.option(
    "--runs", type=click.IntRange(10, 100_000), default=200, show_default=True, help="Tests per truth."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
@json_option
def compare(
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_pairs: int,
    fmt: str | None,
    draws: float | None,
    deck_luck: float,
    runs: int,
    seed: int,
    as_json: bool,
) -> None:
    """The error rates and length of `arena compare`'s SPRT at these settings, measured by simulation.

    RUNS simulated tests on duplicate pairs with A truly ELO0 better (how often H1 is accepted: the
    measured α) and RUNS with A truly ELO1 better (H0 accepted: the measured β; H1: the power), with
    the median pairs to decide. Baseline, in the same run: Wald's expected length for the simulated
    pairs' spread, what `arena compare` prints when it starts. The pair model (--draws, --deck-luck)
    is an assumption: read `pentanomial` in `arena compare --json` to choose it (docs/ladder.md).
    """
    from arena.bench.compare_sim import ModelError, run_compare_bench
    from arena.cli.errors import UserError
    from arena.cli.ladder_common import parse_rules

    if elo1 <= elo0:
        raise click.UsageError(f"--elo1 ({elo1:g}) must be above --elo0 ({elo0:g})")
    rules = parse_rules((), fmt)
    can_draw = any(p.startswith("max_deals=") and p.split("=", 1)[1].lower() != "none" for p in rules)
    if draws is None:
        draws = 0.1 if can_draw else 0.0
    elif draws > 0 and not can_draw:
        raise click.UsageError("a match to flags cannot be drawn: --draws needs --format deals=N")
    settings = {
        "elo0": elo0,
        "elo1": elo1,
        "alpha": alpha,
        "beta": beta,
        "max_pairs": max_pairs,
        "format": fmt or "flags=1",
        "draws": draws,
        "deck_luck": deck_luck,
    }
    try:
        r = with_progress("compare benchmark", lambda p: run_compare_bench(settings, runs, seed, p), as_json)
    except ModelError as exc:
        raise UserError(str(exc)) from None

    def rate(x: float) -> str:
        return f"{x:.3f} ± {(x * (1 - x) / runs) ** 0.5:.3f}"

    a0, a1, wald = r["at_elo0"], r["at_elo1"], r["wald_expected_pairs"]
    rows = [
        ("α  H1 accepted at elo0", rate(r["alpha_measured"]), f"nominal {alpha:g}"),
        ("β  H0 accepted at elo1", rate(r["beta_measured"]), f"nominal {beta:g}"),
        ("power  H1 accepted at elo1", rate(r["power_measured"]), f"nominal {1 - beta:g}"),
        (
            "inconclusive at the limit",
            f"{a0['inconclusive']:.3f} / {a1['inconclusive']:.3f}",
            "at elo0 / elo1",
        ),
        (
            "pairs to decide at elo0",
            f"{a0['median_pairs']:g}",
            f"median; 90% within {a0['p90_pairs']}; Wald's expected {wald['elo0']:g}",
        ),
        (
            "pairs to decide at elo1",
            f"{a1['median_pairs']:g}",
            f"median; 90% within {a1['p90_pairs']}; Wald's expected {wald['elo1']:g}",
        ),
    ]
    title = (
        f"compare benchmark: {runs} simulated tests at each truth, elo0 {elo0:g}, elo1 {elo1:g}, "
        f"α {alpha:g}, β {beta:g}, {settings['format']}, draws {draws:g}, deck luck {deck_luck:g}, "
        f"pair score sd {r['wald_pair_sd']:.3f}"
    )
    emit(r, as_json, title, rows, "± is one standard error of the measured rate")
