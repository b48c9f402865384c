"""`arena bench` for the system around the game: the sandbox's launch, the referee's round trip,
the server's memory, a season's throughput and the ratings fit."""

from __future__ import annotations

from collections.abc import Callable

import click

from arena.cli.bench_report import emit, json_option, with_progress


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
@json_option
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
@json_option
def ladder(matches: int, launcher: str | None, warm: bool, field: str, as_json: bool) -> None:
    """Matches per minute of a season of the sample Python bots at concurrency 1 and 2.

    Baseline, in the same run: the same number of matches through `play_match` directly, one at a
    time, with no store, matchmaking or pool. Its matches give the CPU per match (referee and bots'
    cgroups), the season runs the season parent's own (claims, matchmaking, recording), and their sum
    the cores' CPU ceiling in matches/min. With --warm, every figure twice, alternated: "cold" is the
    path before issue #18 (the samples as gRPC bots, each match's bots started afresh) and "warm" the
    samples as they ship (the SDK speaking the stdio lines, a zygote per bot forking each match's bot:
    docs/sandbox.md "Warm start"). With --field node,
    the Node.js samples; with --field stdio, the stdio samples, direct and behind the bridge
    (docs/sandbox.md "stdio bots").
    """
    from arena.bench.ladder import run_ladder
    from arena.workers.execute import bwrap_available

    launcher = launcher or ("bwrap" if bwrap_available() else "local")
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
@click.option("--large/--no-large", default=True, show_default=True, help="Also the 2,000-bot, 1M-game fit.")
@click.option(
    "--spread/--no-spread", default=True, show_default=True, help="Also the live-Elo spread simulation."
)
@json_option
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
