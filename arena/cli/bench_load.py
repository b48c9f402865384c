"""The options and the report of `arena bench serve --load` (arena/bench/serve_load.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from arena.cli.bench_report import emit, with_progress
from arena.cli.errors import UserError

CPU_PARTS = ("server", "ladder", "callers", "kernel", "other")


def load_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--load and what it takes: the phases' length and who calls."""
    options = [
        click.option("--load", is_flag=True, help="Instead: the load test of a server playing a ladder season."),
        click.option("--seconds", type=click.FloatRange(2, 3600), default=60, show_default=True,
                     help="With --load: the length of each phase (no load, then load)."),
        click.option("--spectators", type=click.IntRange(0, 200), default=20, show_default=True,
                     help="With --load: spectators, each from its own loopback address, about a call a second."),
        click.option("--owners", type=click.IntRange(0, 50), default=5, show_default=True,
                     help="With --load: bot owners with a token and a bot each."),
        click.option("--hostile/--no-hostile", default=True, show_default=True,
                     help="With --load: one owner doing everything at its limits at once."),
        click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True,
                     help="With --load: the server's --workers (ladder matches at once)."),
        click.option("--sandbox", default="bwrap", show_default=True,
                     help="With --load: how the server runs bots (bwrap, docker or local)."),
        click.option("--players-nice", type=click.IntRange(0, 19), default=10, show_default=True,
                     help="With --load: the server's --players-nice (0: its ladder at its own priority)."),
    ]  # fmt: skip
    for option in reversed(options):
        command = option(command)
    return command


def run_load(plan: dict[str, Any], as_json: bool) -> None:
    from arena.bench.serve_load import LoadPlan, run
    from arena.cli.ladder_common import check_launcher

    check_launcher(plan["sandbox"])
    if plan["spectators"] + plan["owners"] == 0 and not plan["hostile"]:
        raise UserError("--load needs callers: give --spectators or --owners, or keep --hostile")
    chosen = LoadPlan(**plan)
    r = with_progress("load benchmark", lambda progress: run(chosen, progress=progress), as_json)
    met = r["met"]
    rows = [
        ("ladder, no load", f"{r['ladder_unloaded_per_min']} /min", f"{r['ladder_matches']['unloaded']} matches: the baseline"),
        ("ladder, under load", f"{r['ladder_loaded_per_min']} /min",
         f"{r['ladder_ratio'] * 100:.0f}% of the baseline (target >= {r['targets']['ladder_ratio'] * 100:.0f}%)"
         f"{'' if met['ladder_ratio'] else ' NOT met'}"),
        ("errors", str(r["errors"]), f"target 0{'' if met['errors'] else ' NOT met'}"),
        ("p99 of public reads", f"{r['public_reads_p99_ms']} ms",
         f"target <= {r['targets']['public_reads_p99_ms']:.0f} ms{'' if met['public_reads_p99_ms'] else ' NOT met'}"),
        ("callers' loop lag p50 / p99 / max",
         " / ".join(f"{r['callers_loop_lag'][k]}" for k in ("p50_ms", "p99_ms", "max_ms")) + " ms",
         "the bench's own delay inside each latency (its loop busy or waiting for a core)"),
        ("RSS idle / load start / half / end",
         f"{r['rss_idle_mib']} / {r['rss_load_start_mib']} / {r['rss_load_mid_mib']} / {r['rss_load_end_mib']} MiB",
         f"flat: end within {r['targets']['rss_growth_mib']:.0f} MiB of half{'' if met['rss_flat'] else ' NOT met'}"),
    ]  # fmt: skip
    for phase, used in r["cpu_cores"].items():
        rows.append((f"cores used, {phase}", " / ".join(f"{used[p]:.2f}" for p in CPU_PARTS),
                     "server / ladder (players, bots) / callers / kernel threads / other programs"))  # fmt: skip
        rows.append((f"server threads waiting for a core, {phase}", f"{used['server_waiting']:.2f}",
                     "on average: ready to run, no core free (0 when the server is not starved)"))  # fmt: skip
    for name, c in r["calls"].items():
        rows.append((f"  {name}", f"{c['p50_ms']} / {c['p99_ms']} ms",
                     f"p50/p99, {c['calls']} calls, {c['refused']} refused, {c['error']} errors"))  # fmt: skip
    plan_text = ", ".join(f"{k} {v}" for k, v in r["plan"].items())
    emit(r, as_json, f"load benchmark: arena serve playing a ladder season ({plan_text})", rows,
         "" if r["server_alive"] else "the server DIED during the load; see its log")  # fmt: skip
