"""`arena bench` for the ladder: a season's throughput (`ladder`) and the ratings fit (`ratings`)."""

from __future__ import annotations

from collections.abc import Callable

import click

from arena.cli.bench_report import emit, json_option, with_progress


@click.command("ladder")
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
@click.option(
    "--warm/--no-warm",
    default=False,
    show_default=True,
    help="Measure the Python samples as they ship (stdio lines, warm start) against the path before "
    "both (the same bots speaking gRPC, cold), in the same run.",
)
@click.option(
    "--field",
    type=click.Choice(["python", "node", "stdio"]),
    default="python",
    show_default=True,
    help="The bots: the Python samples, the Node.js samples (node, typescript), or the compiled stdio "
    "samples (C, Go, Rust) measured both with the referee speaking their lines and behind the Python "
    "stdio bridge (the baseline), in one run.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "celery"]),
    default="local",
    show_default=True,
    help="celery: a season through the Celery workers of ARENA_BROKER_URL against the local pool, both "
    "on the store of ARENA_DATABASE_URL at --concurrency (docs/deploy.md 'Measured on separate hosts').",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    default=None,
    help="With --executor celery: matches in flight, the worker processes listening (default 1).",
)
@json_option
def ladder(
    matches: int,
    launcher: str | None,
    warm: bool,
    field: str,
    executor: str,
    concurrency: int | None,
    as_json: bool,
) -> None:
    """Matches per minute of a season of the sample Python bots at concurrency 1 and 2.

    Baseline, in the same run: the same number of matches through `play_match` directly, one at a
    time, with no store, matchmaking or pool. Its matches give the CPU per match (referee and bots'
    cgroups), the season runs the season parent's own (claims, matchmaking, recording), and their sum
    the cores' CPU ceiling in matches/min. With --warm, every figure twice, alternated: "cold" is the
    path before issue #18 (the samples as gRPC bots, each match's bots started afresh) and "warm" the
    samples as they ship (the SDK speaking the stdio lines, a zygote per bot forking each match's bot:
    docs/sandbox.md "Warm start"). With --field node,
    the Node.js samples; with --field stdio, the stdio samples, direct and behind the bridge
    (docs/sandbox.md "stdio bots"). With --executor celery, a season through the Celery workers
    against one through the local pool at the same --concurrency, with the broker's and the store's
    cost per match (arena/bench/ladder_celery.py).
    """
    from arena.bench.ladder import run_ladder
    from arena.workers.execute import bwrap_available

    launcher = launcher or ("bwrap" if bwrap_available() else "local")
    if executor == "celery":
        if warm or field != "python":
            raise click.UsageError(
                "--executor celery plays the Python samples as they ship: drop --warm/--field"
            )
        from arena.cli.bench_celery import celery_ladder

        celery_ladder(matches, launcher, concurrency or 1, as_json)
        return
    if concurrency is not None:
        raise click.UsageError(
            "--concurrency goes with --executor celery (the local ladder measures 1 and 2)"
        )
    if warm and launcher != "bwrap":
        raise click.UsageError("--warm needs the bwrap sandbox (--sandbox bwrap, as root)")
    if warm and field != "python":
        raise click.UsageError("--warm is the warm start of Python bots: use it with --field python")
    r = with_progress(
        "ladder benchmark",
        lambda progress: run_ladder(matches, launcher, progress, warm=warm, field=field),
        as_json,
    )
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
                f"{r['c2_vs_c1']}x c1"
                + (f", {r['c2_of_ceiling']:.0%} of the CPU ceiling" if "c2_of_ceiling" in r else ""),
            ),
            (
                "CPU per match (baseline's matches + season parent)",
                f"{sum(r['cpu_ms_per_match'].values()):.1f} ms",
                f"referee {r['cpu_ms_per_match']['referee']} ms, bots {r['cpu_ms_per_match']['bots']} ms, "
                f"season parent {r['cpu_ms_per_match']['season_parent']} ms",
            ),
            (
                "CPU ceiling of the cores",
                f"{r.get('cpu_ceiling_matches_per_min', 0)} matches/min",
                f"{r['cores']} cores / CPU per match",
            ),
            *[
                (
                    f"  phase: {name}",
                    f"{ms} ms",
                    f"{ms / max(0.1, sum(r['cpu_ms_per_match'].values())):.0%} of the CPU",
                )
                for name, ms in r["phases_cpu_ms_per_match"].items()
            ],
            *_warm_rows(r),
            *_bridge_rows(r),
        ],  # fmt: skip
    )


def _warm_rows(r: dict) -> list[tuple[str, str, str]]:
    """The warm start's figures beside the cold ones of the same run (`bench ladder --warm`)."""
    if "warm" not in r:
        return []
    return _mode_rows("warm", r["warm"], r["warm_vs_cold"], "{}x cold", "bots and zygotes")


def _bridge_rows(r: dict) -> list[tuple[str, str, str]]:
    """The stdio field behind the Python bridge, the same run's baseline (`bench ladder --field stdio`)."""
    if "bridge" not in r:
        return []
    return _mode_rows("bridge", r["bridge"], r["direct_vs_bridge"], "direct: {}x", "bots")


def _mode_rows(tag: str, m: dict, ratio: dict, note: str, bots: str) -> list[tuple[str, str, str]]:
    """A second mode's figures from the same run; `note` shows its ratio to the first mode."""
    cpu = sum(m["cpu_ms_per_match"].values())
    return [
        (f"{tag:<9} play_match in a loop", f"{m['baseline_matches_per_min']} matches/min", "same run, alternated"),
        (f"{tag:<9} ladder concurrency 1", f"{m['ladder_c1_matches_per_min']} matches/min", note.format(ratio["c1"])),
        (f"{tag:<9} ladder concurrency 2", f"{m['ladder_c2_matches_per_min']} matches/min", note.format(ratio["c2"])
         + (f", {m['c2_of_ceiling']:.0%} of its CPU ceiling ({m['cpu_ceiling_matches_per_min']} matches/min)"
            if "c2_of_ceiling" in m else "")),
        (f"{tag:<9} CPU per match", f"{cpu:.1f} ms", f"{note.format(ratio['cpu_per_match'])}, "
         f"referee {m['cpu_ms_per_match']['referee']} ms, {bots} {m['cpu_ms_per_match']['bots']} ms, "
         f"season parent {m['cpu_ms_per_match']['season_parent']} ms"),
        *[(f"  {tag} phase: {name}", f"{ms} ms", f"{ms / max(0.1, cpu):.0%} of the CPU")
          for name, ms in m["phases_cpu_ms_per_match"].items()],
    ]  # fmt: skip


@click.command("ratings")
@click.option("--bots", type=click.IntRange(2, 2000), default=200, show_default=True)
@click.option("--matches", type=click.IntRange(10, 10_000_000), default=100_000, show_default=True)
@click.option(
    "--large/--no-large",
    default=True,
    show_default=True,
    help="Also sparse against dense at 200, 2,000, 10,000 bots.",
)
@click.option(
    "--spread/--no-spread", default=True, show_default=True, help="Also the live-Elo spread simulation."
)
@click.option("--coverage", is_flag=True, help="Also the 95% intervals' coverage at 200 and 2,000 bots.")
@json_option
def ratings(bots: int, matches: int, large: bool, spread: bool, coverage: bool, as_json: bool) -> None:
    """Time to fit season ratings (ML Bradley-Terry with intervals) against a naive iterative fit.

    Baseline, in the same run: the classic minorisation-maximisation iteration over the match list
    in plain Python, to the same data. Target: the fit for 100,000 matches among 200 bots < 2 s.
    Then the steadiness of repeated small fits; unless --no-large, the sparse fit against the dense
    reference at 200, 2,000 and 10,000 bots (100 games each; cold, and a warm refit after 1,000 more
    results; targets: cold ≤ 2 s, refit ≤ 0.1 s); with --coverage, the intervals' coverage of the
    true ratings; unless --no-spread, live Elo's spread against the true one after 4,000 games per
    bot over ten seeds, paired on the fit against paired on live Elo.
    """
    from arena.bench.ladder import run_ratings
    from arena.bench.ratings import run_all

    def work(progress: Callable[[float], None]) -> dict:
        r = run_ratings(bots, matches, progress=lambda f: progress(f / 2))
        r.update(run_all(lambda f: progress(0.5 + f / 2), large, spread, bots, matches, coverage))
        return r

    r = with_progress("ratings benchmark", work, as_json)
    st = r["steadiness"]
    rows = [
        ("baseline  MM iteration, plain Python", f"{r['naive_s']} s", f"{r['naive_iterations']} iterations"),
        (
            "fit       Newton + covariance",
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
        xl = max(r["large"]["sizes"], key=lambda g: g["bots"])
        step_xl = next(v for k, v in xl.items() if k.startswith("incremental_refit") and k.endswith("0_s"))
        footer += (
            f"; at {xl['bots']:,} bots cold ≤ {r['large']['target_cold_s']} s: "
            f"{'met' if xl['sparse_fit_s'] <= r['large']['target_cold_s'] else 'NOT met'}, incremental ≤ "
            f"{r['large']['target_warm_s_per_1000']} s: {'met' if step_xl <= r['large']['target_warm_s_per_1000'] else 'NOT met'}"
            f" (load {r['large']['load_before']}, {r['large']['threads']} threads)"
        )  # fmt: skip
    if "large" in r:
        for g in r["large"]["sizes"]:
            warm = next(v for k, v in g.items() if k.startswith("warm_refit_after"))
            step = next(v for k, v in g.items() if k.startswith("incremental_refit_after"))
            dense = g["dense_fit_s"]
            rows.append(
                (
                    f"sparse    {g['bots']:,} bots, {g['matches']:,} matches",
                    f"{g['sparse_fit_s']} s",
                    f"{g['iterations']} iterations; refit after 1,000 more {warm} s ({g['warm_iterations']} it.), "
                    + (f"incremental {step} s ({g['incremental_max_diff_elo']} Elo off); " if g["incremental"]
                       else f"incremental: the full fit ({step} s, under 100,000 pairs); ")
                    + (f"dense {dense} s, max diff {g['max_rating_diff_elo']} Elo, ±95% ratio {g['ci95_ratio_min_max']}"
                       if isinstance(dense, float) else f"dense {dense}"),
                )
            )  # fmt: skip
            before = next(
                v for k, v in g.items() if k.startswith("incremental_refit") and k.endswith("_before_s")
            )
            step_cpu = next(
                v for k, v in g.items() if k.startswith("incremental_refit") and k.endswith("0_cpu_s")
            )
            before_cpu = next(
                v for k, v in g.items() if k.startswith("incremental_refit") and k.endswith("before_cpu_s")
            )
            rows.append(
                (
                    "          against its baseline, same run",
                    f"cold {g['sparse_fit_s']} s / {g['sparse_fit_before_s']} s",
                    f"CPU {g['sparse_fit_cpu_s']} / {g['sparse_fit_before_cpu_s']} s; incremental {step} s / "
                    f"{before} s, CPU {step_cpu} / {before_cpu} s (baseline: int64 passes on one thread; "
                    f"pair by pair, cold {g['sparse_fit_pair_by_pair_s']} s)",
                )
            )  # fmt: skip
    for c in r.get("coverage", []):
        rows.append(
            (
                f"coverage  {c['bots']:,} bots, {c['ladders']} ladders",
                f"{c['coverage']:.3f}",
                f"{c['cases']:,} cases, opponents {c['opponents']}; extremes {c['coverage_extremes']:.3f}; "
                f"normal interval {c['coverage_normal']:.3f}, extremes {c['coverage_normal_extremes']:.3f}; "
                f"target {c['target']}",
            )
        )
    if "spread" in r:
        p = r["spread"]
        f, v = p["fit_paired"], p["live_paired"]
        rows.append(
            (
                f"live spread/true, {p['bots']} bots x {p['games_per_bot']:,} games, {p['seeds']} seeds",
                f"{f['mean']}",
                f"paired on the fit (sd {f['sd']}, {f['min']}-{f['max']}, {f['within_10pct']:.0%} within ±10%); "
                f"on live Elo {v['mean']} (sd {v['sd']}, {v['min']}-{v['max']})",
            )
        )
        footer += (
            f"; paired on the fit nearer the truth in every season: {'yes' if p['target_met'] else 'NO'}"
        )
    emit(r, as_json, f"ratings benchmark: {r['matches']:,} matches among {r['bots']} bots", rows, footer)
