"""`arena bench` for play itself: the engine's speed, the solver's, and the sample bots' strength
against the oracle."""

from __future__ import annotations

import click

from arena.cli.bench_report import emit, json_option, with_progress


@click.command("engine")
@click.option("--seconds", type=click.FloatRange(0.2, 600), default=3.0, show_default=True,
              help="CPU seconds to spend in total, shared by the variants.")  # fmt: skip
@json_option
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


@click.command("strength")
@click.option("--deals", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Duplicate deals per bot (each played twice, seats swapped).")  # fmt: skip
@click.option("--bots", "names", default=None, metavar="NAME,...",
              help="Python sample bots (folders of sample_bots/python); default: random, greedy, tactician, "
                   "pimc, ismcts.")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the deals.")
@click.option("--rules", "rules", multiple=True, metavar="K=V", help="Rules option(s), e.g. trumps=true.")
@click.option("--oracle-playouts", type=click.IntRange(1, 1024), default=16, show_default=True,
              help="Playouts per line of the oracle's own search: more make a stronger yardstick; figures "
                   "compare only at the same count (the target is set at 16).")  # fmt: skip
@click.option("--peek", is_flag=True,
              help="Also play ismcts shown the opponent's hand (ismcts+hand), then the stock's order too "
                   "(ismcts+all: all the oracle sees), on the same deals: what the hidden cards cost the "
                   "search. A measurement only: no bot can see them.")  # fmt: skip
@json_option
def strength(
    deals: int, names: str | None, seed: int, rules: tuple[str, ...], oracle_playouts: int, peek: bool,
    as_json: bool,
) -> None:  # fmt: skip
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
            lambda progress: run(
                bots, deals, seed, the_rules, progress=progress, oracle_playouts=oracle_playouts, peek=peek
            ),
            as_json,
        )
    except (FileNotFoundError, TypeError) as exc:
        raise click.UsageError(str(exc)) from None
    rows = [
        (
            name,
            f"{row['margin']:+.2f}" + ("" if row["ci95"] is None else f" ±{row['ci95']:.2f}"),
            _closed(row, r),
        )
        for name, row in r["bots"].items()
    ]
    emit(
        r,
        as_json,
        f"strength benchmark: honours margin per deal against the oracle, {deals} duplicate deals, "
        f"rules {r['rules']}, seed {seed}, oracle {oracle_playouts} playouts a line",
        rows,
        "margin: the bot's honours minus the oracle's, per deal (95% interval over the duplicate pairs); "
        f"closed: the share of {r['baseline']}'s gap closed, 95% interval from the per-deal pairs with "
        f"{r['baseline']} (Fieller)",
    )


def _closed(row: dict, r: dict) -> str:
    """The note of a strength row: the share of the baseline's gap closed, paired interval, CPU per deal."""
    cpu = f"{row['cpu_s_per_deal']:.2f} CPU s/deal"
    if row["closed"] is None:
        return cpu
    if "vs_baseline" not in row:
        return f"{cpu}; baseline"
    lo_hi = row["closed_ci95"]
    ci = " (interval unbounded)" if lo_hi is None else f" ({lo_hi[0]:.0%} .. {lo_hi[1]:.0%})"
    diff = row["vs_baseline"], row["vs_baseline_ci95"]
    pair = f"{diff[0]:+.2f}" + ("" if diff[1] is None else f" ±{diff[1]:.2f}")
    return f"{cpu}; closes {row['closed']:.0%}{ci} of {r['baseline']}'s gap, {pair} per deal vs it"


@click.command("solver")
@click.option("--positions", type=click.IntRange(10, 100_000), default=400, show_default=True,
              help="Fresh 6-card endgames to solve (the same ones for every variant).")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="Seed of the random endgames.")
@json_option
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
