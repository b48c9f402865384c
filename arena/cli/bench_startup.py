"""`arena bench startup`: what a bot costs before its first move, from launch until the referee has its
`Join`: the Python runtimes compared (lean prefix against the whole venv), or every language's sample;
and `arena bench stdio`, what a stdio bot's move costs the referee's process by how its seat is served."""

from __future__ import annotations

import click

from arena.cli.bench_report import emit, json_option, with_progress


@click.command("startup")
@click.option(
    "--rounds", type=click.IntRange(1, 100), default=None,
    help="Matches per runtime, alternated (medians are printed); default 10, with --languages 5.",
)  # fmt: skip
@click.option(
    "--languages", "languages", is_flag=True,
    help="Instead: each language's sample until the referee has its Join, against a bare hello-world "
    "in that language, and each compiled sample's cold build.",
)  # fmt: skip
@click.option(
    "--language", "only", multiple=True, metavar="NAME",
    help="With --languages: only these (python node typescript cpp c shell go rust csharp java ruby).",
)  # fmt: skip
@click.option(
    "--sandbox", type=click.Choice(["bwrap", "docker"]), default="bwrap", show_default=True,
    help="With --languages: the launcher of the builds and matches (docker: DOCKER_HOST's engine).",
)  # fmt: skip
@json_option
def startup(rounds: int | None, languages: bool, only: tuple[str, ...], sandbox: str, as_json: bool) -> None:
    """A Python bot's start-up until its Join, from its own cgroup's CPU: the lean runtime prefix
    against the whole virtualenv (the runtime before it), alternated match by match in one run.
    With --languages, the same until Join for every language's sample bot.

    See arena/bench/startup.py, arena/bench/languages.py and docs/sandbox.md ("The runtime",
    "Start-up per language").
    """
    if languages or only:
        _startup_languages(rounds or 5, only, sandbox, as_json)
        return
    if sandbox != "bwrap":
        raise click.UsageError("--sandbox goes with --languages (the Python runtimes are compared in bwrap)")
    from arena.bench.startup import VARIANTS, run

    rounds = rounds or 10
    r = with_progress("start-up benchmark", lambda progress: run(rounds, progress), as_json)
    rows = []
    for name in VARIANTS:
        v = r["variants"][name]
        note = (
            "baseline"
            if VARIANTS[name]
            else f"{r['join_cpu_ratio']:.2f}x CPU, {r['join_wall_ratio']:.2f}x wall"
        )
        rows.append((f"{name}: CPU per bot until Join", f"{v['join_cpu_ms']:.1f} ms", note))
        rows.append((f"{name}: wall, launch to both joined", f"{v['join_wall_ms']:.1f} ms", ""))
        rows.append((f"{name}: CPU per bot, whole match", f"{v['bot_cpu_ms']:.1f} ms", "one deal"))
    emit(r, as_json, f"start-up benchmark: {rounds} one-deal bwrap matches per runtime, {r['bot']} vs itself",
         rows, f"saved per bot: {r['join_cpu_saved_ms']:.1f} ms CPU")  # fmt: skip


def _startup_languages(rounds: int, only: tuple[str, ...], sandbox: str, as_json: bool) -> None:
    from arena.bench.languages import SAMPLES, run

    unknown = [n for n in only if n not in SAMPLES]
    if unknown:
        raise click.BadParameter(
            f"no sample for {', '.join(unknown)}; choose from {' '.join(SAMPLES)}", param_hint="--language"
        )
    chosen = tuple(only) or tuple(SAMPLES)
    from arena.sandbox.docker import DockerUnavailable

    try:
        r = with_progress(
            "start-up per language", lambda progress: run(rounds, chosen, progress, sandbox), as_json
        )
    except DockerUnavailable as exc:
        raise click.ClickException(f"--sandbox docker: {exc}; set DOCKER_HOST to a running engine") from None
    rows = []
    for name, v in r["languages"].items():
        build = f"cold build {v['build_s']:.1f} s" if v["build_s"] is not None else "no build"
        rows.append(
            (
                f"{name}: launch to both joined",
                f"{v['join_wall_ms']:.0f} ms",
                f"bare hello-world {v['hello_bare_ms']:.1f} ms; CPU per bot until Join "
                f"{v['join_cpu_ms']:.0f} ms; {build}",
            )
        )
        rows.append((f"{name}: CPU per match", _match_cpu(v), "both bots + the referee's process, one deal"))
        if "bridged" in v:  # a stdio sample: the same bundle behind the Python bridge, same rounds
            b = v["bridged"]
            rows.append((f"{name} behind the bridge: launch to both joined", f"{b['join_wall_ms']:.0f} ms",
                         f"CPU per bot until Join {b['join_cpu_ms']:.0f} ms (baseline)"))  # fmt: skip
            ratio = (2 * v["bot_cpu_ms"] + v["referee_cpu_ms"]) / (2 * b["bot_cpu_ms"] + b["referee_cpu_ms"])
            rows.append((f"{name} behind the bridge: CPU per match", _match_cpu(b), f"direct: {ratio:.2f}x"))
    for name, why in r["skipped"].items():
        rows.append((f"{name}: skipped", "-", why))
    emit(r, as_json, f"start-up per language: {rounds} one-deal {sandbox} matches of each sample vs itself",
         rows, f"load {r['loadavg']}")  # fmt: skip


def _match_cpu(v: dict[str, float]) -> str:
    return f"{2 * v['bot_cpu_ms'] + v['referee_cpu_ms']:.0f} ms ({v['bot_cpu_ms']:.0f} per bot, referee {v['referee_cpu_ms']:.0f})"


@click.command("stdio")
@click.option("--turns", type=click.IntRange(100, 100_000), default=2000, show_default=True,
              help="Moves per measurement (after a warm-up of 50).")  # fmt: skip
@click.option("--rounds", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Measurements per design, alternated (medians are printed).")  # fmt: skip
@json_option
def stdio(turns: int, rounds: int, as_json: bool) -> None:
    """The referee process's CPU per move of a stdio bot: its seat served in-process (the referee
    speaks the lines on the bot's pipes) against the same seat joining through a gRPC socket, and the
    line translation alone. See arena/bench/stdio_seat.py and docs/sandbox.md ("stdio bots")."""
    from arena.bench.stdio_seat import run

    r = with_progress("stdio seat benchmark", lambda progress: run(turns, rounds, progress), as_json)
    rows = [
        ("in-process seat (the referee's)", f"{r['in_process_us']:.1f} us/move", f"runs {r['in_process_runs_us']}"),
        ("through a gRPC socket (baseline)", f"{r['socket_us']:.1f} us/move",
         f"{r['socket_vs_in_process']:.2f}x in-process; runs {r['socket_runs_us']}"),
        ("the line translation alone", f"{r['translation_us']:.1f} us/move", "referee_line + raw_bot_message"),
    ]  # fmt: skip
    emit(r, as_json, f"stdio seat benchmark: the referee process's CPU per move, {turns} moves x {rounds}",
         rows, f"load {r['loadavg']}")  # fmt: skip


@click.command("play")
@click.option("--rounds", type=click.IntRange(1, 100), default=9, show_default=True,
              help="Runs of each variant, alternated (medians are printed).")  # fmt: skip
@click.option("--sandbox", type=click.Choice(["bwrap", "local"]), default="bwrap", show_default=True,
              help="The launcher of the two random bots.")  # fmt: skip
@json_option
def play(rounds: int, sandbox: str, as_json: bool) -> None:
    """What the `arena play` process itself costs (one deal of the random sample against itself):
    its own CPU, and the CPU and wall of its exit after the match, with the collector frozen at exit
    (now) against not (the exit before), alternated. See arena/bench/play_process.py."""
    from arena.bench.play_process import run

    r = with_progress("arena play benchmark", lambda progress: run(rounds, sandbox, progress), as_json)
    now, before = r["medians"]["frozen"], r["medians"]["unfrozen"]
    rows = [
        ("exit, collector frozen (now)", f"{now['exit_cpu_ms']:.1f} ms CPU",
         f"wall {now['exit_wall_ms']:.1f} ms; {r['exit_ratio']:.2f}x the exit before"),
        ("exit, not frozen (before, baseline)", f"{before['exit_cpu_ms']:.1f} ms CPU", f"wall {before['exit_wall_ms']:.1f} ms"),
        ("the process until its command returned", f"{now['process_ms']:.1f} ms CPU",
         f"imports, the match, its replay (not frozen: {before['process_ms']:.1f} ms)"),
    ]  # fmt: skip
    emit(
        r,
        as_json,
        f"arena play benchmark: {rounds} runs of each, --sandbox {sandbox}, load {r['load']:.1f}",
        rows,
    )
