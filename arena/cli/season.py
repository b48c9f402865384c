"""`arena season`: create, start, run, freeze and close ladder seasons, and audit their ratings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import (
    EXECUTOR_HELP,
    SANDBOX_HELP,
    apply_warm,
    check_launcher,
    open_store,
    parse_rules,
    parse_time,
    run_with_progress,
    user_errors,
    warm_option,
)
from arena.cli.remote import Remote, remote_options, store_only


@click.group()
def season() -> None:
    """Ladder seasons: a rules variant, a time control and a match format, played by matchmaking.

    \b
    arena season create autumn --format flags=3 --duplicate --time move=1s,bank=10s
    arena season start autumn
    arena season run autumn --until-stable      # safe to Ctrl-C; run it again to continue
    arena standings autumn
    arena season close autumn                   # final duplicate round robin, then frozen

    create, start, freeze, close and list also work against a remote `arena serve` with --server
    (ARENA_SERVER) and the admin token as --api-token (ARENA_API_TOKEN); the server's workers then
    play the matches (run, verify and export work on the local store only).
    """


@season.command("create")
@click.argument("name")
@click.option(
    "--rules", "rules", multiple=True, metavar="K=V", help="Rules option(s), e.g. --rules scoring=altenburg."
)
@click.option("--time", "time_text", default=None, metavar="move=1s,bank=10s", help="Time control per match.")
@click.option(
    "--format", "fmt", default=None, metavar="flags=N|deals=N", help="First to N flags, or exactly N deals."
)
@click.option("--duplicate", is_flag=True, help="Play every pairing twice, same cards, seats swapped.")
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Seed of the matchmaking's draws only (default: random); match seeds always come from the CSPRNG. "
    "Local store only: a server draws its own.",
)
@click.option(
    "--anchor",
    "anchor_texts",
    multiple=True,
    metavar="NAME=ELO",
    help="Fix bot NAME (or NAME@V) at this fitted Elo, so standings compare across seasons, "
    "e.g. --anchor random=1000. Repeatable.",
)
@click.option(
    "--pair-same-owner/--no-pair-same-owner",
    default=False,
    show_default=True,
    help="May two bots of the same owner meet? Default no: an owner's versions never play each other. "
    "Local store only.",
)
@remote_options
def create(
    name: str,
    rules: tuple[str, ...],
    time_text: str | None,
    fmt: str | None,
    duplicate: bool,
    seed: int | None,
    anchor_texts: tuple[str, ...],
    pair_same_owner: bool,
    remote: Remote | None,
) -> None:
    """Create a draft season NAME (remotely: CreateSeason, admin token only)."""
    from arena.ladder.seasons import create_season

    pairs = parse_rules(rules, fmt)
    tc = parse_time(time_text)
    anchors = parse_anchors(anchor_texts)
    if remote is not None:
        from arena.cli import season_remote

        created = season_remote.create(
            remote, name, pairs, time_text, duplicate, seed, anchors, pair_same_owner
        )
    else:
        with user_errors():
            created = create_season(
                open_store(),
                name,
                rules=pairs,
                time_control=tc,
                duplicate=duplicate,
                seed=seed,
                anchors=anchors,
                pair_same_owner=pair_same_owner,
            )
    extra = "".join(f", anchor {bot}={elo:g}" for bot, elo in anchors.items())
    extra += ", one owner's bots may meet" if pair_same_owner else ""
    click.echo(
        f"season {created.name} created (draft): rules {' '.join(pairs) or 'default'}, "
        f"time {time_text or 'default'}{', duplicate' if duplicate else ''}{extra}; "
        f"next: `arena season start {name}`"
    )


def parse_anchors(texts: tuple[str, ...]) -> dict[str, float]:
    """`NAME=ELO` (NAME may be NAME@V) -> {NAME: ELO}; one-line errors for anything else."""
    import math

    out: dict[str, float] = {}
    for text in texts:
        bot, sep, value = text.partition("=")
        try:
            elo = float(value)
        except ValueError:
            elo = math.nan
        if not sep or not bot.strip() or not math.isfinite(elo):
            raise UserError(f"--anchor {text!r}: give NAME=ELO with a number, e.g. --anchor random=1000")
        if bot.strip() in out:
            raise UserError(f"--anchor {text!r}: {bot.strip()} is anchored twice; give each bot once")
        out[bot.strip()] = elo
    return out


@season.command("add")
@click.argument("name")
@click.argument("bot")
def add(name: str, bot: str) -> None:
    """Enter BOT (NAME[@VERSION]) in season NAME's ladder: for versions `arena compare` registered,
    which stay out of seasons until an organiser adds them."""
    from arena.ladder.seasons import add_version

    store_only("season add")
    store = open_store()
    with user_errors():
        version = store.version(bot)
        add_version(store, name, version.id)
    click.echo(f"{version.label} added to the ladder; season {name} schedules it from now on")


@season.command("start")
@click.argument("name")
@remote_options
def start(name: str, remote: Remote | None) -> None:
    """Open NAME for play, entering every active bot's newest version (remotely: StartSeason, admin)."""
    from arena.ladder.runner import active_entries
    from arena.ladder.seasons import start_season

    if remote is not None:
        from arena.cli import season_remote

        season_remote.start(remote, name)
        return
    store = open_store()
    with user_errors():
        start_season(store, name)
    n = active_entries(store, name)
    click.echo(f"season {name} running with {n} bots; `arena season run {name} --matches 50` plays")
    if n < 2:
        click.echo("note: fewer than two bots; submit some with `arena bots submit`", err=True)


def _play(
    store,
    name: str,
    *,
    matches: int | None,
    until_stable: bool,
    concurrency: int | None,  # noqa: ANN001
    launcher: str,
    stable_ci: float,
    max_matches: int,
    quiet: bool,
    executor: str = "local",
) -> None:
    from arena.ladder.runner import SeasonRun
    from arena.workers.execute import run_job

    with user_errors():
        source = SeasonRun(
            store,
            name,
            matches=matches,
            until_stable=until_stable,
            stable_ci=stable_ci,
            max_matches=max_matches,
            launcher=launcher,
        )
    done_before, _ = source.counts()
    total = matches if matches is not None else (max_matches if until_stable else None)
    if source_status(store, name) == "closing":
        done_before, total = 0, None
    try:
        progress = run_with_progress(
            source,
            run_job,
            concurrency=concurrency,
            label=f"season {name}",
            target_done=done_before,
            total=total,
            quiet=quiet,
            executor=executor,
        )
    except KeyboardInterrupt:
        click.echo(
            "\ninterrupted: recorded matches are kept, unfinished ones went back to the queue; "
            "run the same command again to continue",
            err=True,
        )
        sys.exit(130)
    for bot in dict.fromkeys(source.suspended):
        click.echo(f"suspended {bot}: see `arena bots show {bot}`", err=True)
    for err in source.errors:
        click.echo(f"warning: {err}", err=True)
    if source.blocked:  # matchmaking could pair nobody: say why, never "played 0 matches"
        if progress.done:
            click.echo(f"played {progress.done} matches in {progress.elapsed:.0f}s, then stopped", err=True)
        raise UserError(source.blocked)
    click.echo(
        f"played {progress.done} matches in {progress.elapsed:.0f}s ({progress.rate:.1f}/min)"
        + (f", {progress.failed} failed" if progress.failed else "")
    )
    if until_stable and not source.check_stable():
        who = "; ".join(f"{bot}: {why}" for bot, why in source.unstable)
        raise UserError(
            f"season {name} is not stable after {source.counts()[0]} ladder matches (--max-matches "
            f"{max_matches}); kept from converging by {who}"
        )
    if until_stable:
        click.echo(f"season {name} is stable: every active bot rated within ±{stable_ci:g} Elo")


def source_status(store, name: str) -> str:  # noqa: ANN001
    return store.season(name).status


@season.command("run")
@click.argument("name")
@click.option(
    "--matches",
    type=click.IntRange(1),
    default=None,
    help="Play until the season has N recorded ladder matches (whole pairs when duplicate).",
)
@click.option(
    "--until-stable",
    is_flag=True,
    help="Play until every bot is rated, past provisional, without a perfect/zero score and within "
    "--stable-ci; the bar shows who is not and why, and at --max-matches the run names them and exits 2.",
)
@click.option(
    "--stable-ci", type=float, default=50.0, show_default=True, help="Elo half-width for --until-stable."
)
@click.option(
    "--max-matches",
    type=click.IntRange(1),
    default=2000,
    show_default=True,
    help="Stop --until-stable at this many ladder matches anyway.",
)
@click.option(
    "--concurrency", type=click.IntRange(1), default=None, help="Matches at once (default: one per core)."
)
@click.option("--sandbox", "launcher", default="bwrap", show_default=True, help=SANDBOX_HELP)
@click.option(
    "--executor",
    type=click.Choice(["local", "celery"]),
    default="local",
    show_default=True,
    help=EXECUTOR_HELP,
)
@warm_option
@click.option("--quiet", is_flag=True, help="No progress bar.")
def run(
    name: str,
    matches: int | None,
    until_stable: bool,
    stable_ci: float,
    max_matches: int,
    concurrency: int | None,
    launcher: str,
    executor: str,
    warm: bool | None,
    quiet: bool,
) -> None:
    """Play NAME's matches with a live progress bar. Ctrl-C is safe; the same command resumes."""
    store_only("season run")
    if (matches is None) == (not until_stable):
        raise UserError("give exactly one goal: --matches N or --until-stable")
    store = open_store()
    check_launcher(launcher)
    if warm is not None and executor == "celery":
        raise UserError(
            "--warm/--no-warm act on this machine's players; with --executor celery give it to `arena worker`"
        )
    apply_warm(warm, launcher)
    _play(
        store,
        name,
        matches=matches,
        until_stable=until_stable,
        concurrency=concurrency,
        launcher=launcher,
        stable_ci=stable_ci,
        max_matches=max_matches,
        quiet=quiet,
        executor=executor,
    )


@season.command("freeze")
@click.argument("name")
@remote_options
def freeze(name: str, remote: Remote | None) -> None:
    """Stop all play in NAME and freeze its standings as they are (remotely: FreezeSeason, admin)."""
    from arena.ladder.seasons import freeze_season

    if remote is not None:
        from arena.cli import season_remote

        season_remote.step(remote, "FreezeSeason", name)
        click.echo(f"season {name} frozen; `arena standings {name}`")
        return
    with user_errors():
        freeze_season(open_store(), name)
    click.echo(f"season {name} frozen; `arena standings {name}`")


@season.command("close")
@click.argument("name")
@click.option(
    "--concurrency", type=click.IntRange(1), default=None, help="Matches at once (default: one per core)."
)
@click.option("--sandbox", "launcher", default="bwrap", show_default=True, help=SANDBOX_HELP)
@click.option(
    "--executor",
    type=click.Choice(["local", "celery"]),
    default="local",
    show_default=True,
    help=EXECUTOR_HELP,
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
@remote_options
def close(
    name: str, concurrency: int | None, launcher: str, executor: str, quiet: bool, remote: Remote | None
) -> None:
    """Play a final duplicate round robin among NAME's active bots, then freeze it. Resumable.

    Remotely (CloseSeason, admin) the server queues the final matches and its workers play them; the
    season freezes by itself when they are done (the play options are for the local store).
    """
    from arena.ladder.seasons import close_season, maybe_finish_close

    if remote is not None:
        from arena.cli import season_remote

        season_remote.close(remote, name)
        return
    store = open_store()
    check_launcher(launcher)
    with user_errors():
        pending = close_season(store, name)
    click.echo(f"season {name}: final round robin, {pending} matches to play")
    _play(
        store,
        name,
        matches=None,
        until_stable=False,
        concurrency=concurrency,
        launcher=launcher,
        stable_ci=0,
        max_matches=0,
        quiet=quiet,
        executor=executor,
    )
    if maybe_finish_close(store, name):
        click.echo(f"season {name} closed and frozen; `arena standings {name}`")
    else:
        raise UserError(f"season {name}: final matches still pending; run `arena season close {name}` again")


@season.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@remote_options
def list_(as_json: bool, remote: Remote | None) -> None:
    """All seasons with their state and match counts (remotely: ListSeasons, anyone)."""
    if remote is not None:
        from arena.cli import season_remote

        _print_seasons(season_remote.seasons(remote), as_json)
        return
    rows = [
        {
            "name": s.name,
            "status": s.status,
            "rules": s.rules,
            "time": s.time_control,
            "duplicate": s.duplicate,
            "recorded": s.recorded,
        }
        for s in open_store().seasons()
    ]
    _print_seasons(rows, as_json)


def _print_seasons(rows: list[dict], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    if not rows:
        click.echo("no seasons yet; `arena season create NAME`")
    for r in rows:
        click.echo(
            f"{r['name']:<16} {r['status']:<8} {r['recorded']:>6} matches  rules: {' '.join(r['rules']) or 'default'}"
            f"{'  duplicate' if r['duplicate'] else ''}"
        )


@season.command("verify")
@click.argument("name")
def verify(name: str) -> None:
    """Recompute every live Elo rating of NAME from its stored replays and compare with the stored ones."""
    from arena.ladder.standings import verify_ratings

    store_only("season verify")
    with user_errors():
        store = open_store()
        store.season(name)  # a missing season: one line (StoreError), not an error inside the audit
        problems = verify_ratings(store, name)
    if problems:
        for p in problems[:20]:
            click.echo(p, err=True)
        raise UserError(f"season {name}: {len(problems)} rating mismatches against the replays")
    click.echo(f"season {name}: every stored rating equals the one recomputed from the replays")


@season.command("export")
@click.argument("name")
@click.option(
    "--dir",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write the replays (default: $ARENA_HOME/replays/NAME).",
)
def export(name: str, out_dir: Path | None) -> None:
    """Write NAME's replays as files that `arena replay show FILE` and `arena replay verify` read."""
    from arena.ladder.export import export_replays

    store_only("season export")
    store = open_store()
    with user_errors():
        out, count = export_replays(store, name, out_dir)
    click.echo(f"{count} replays in {out}/ (e.g. `arena replay show {out}/<file>`)")
