"""`arena season run` and `arena season close`: play a season's matches on this machine with a progress bar.

arena/cli/season.py keeps the season's bookkeeping (create, start, freeze, list, verify, export) and
attaches these two commands to its group.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from arena.cli.errors import MatchesFailed, NotSettled, UserError
from arena.cli.ladder_common import (
    EXECUTOR_HELP,
    SANDBOX_HELP,
    apply_warm,
    check_launcher,
    open_store,
    run_with_progress,
    user_errors,
    warm_option,
)
from arena.cli.remote import Remote, remote_options, store_only

F = TypeVar("F", bound=Callable[..., Any])
# --until-stable's defaults: arena.ladder.settle.STABLE_CI and the simulation's MAX_MATCHES (a test
# keeps them equal)
STABLE_CI, MAX_MATCHES = 100.0, 2000


def play_season(
    store,
    name: str,
    *,
    matches: int | None,
    until_stable: bool,
    concurrency: int | None,
    launcher: str,
    stable_ci: float,
    max_matches: int,
    quiet: bool,
    executor: str = "local",
) -> None:
    from arena.ladder.runner import MAX_FAILED, SeasonRun
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
    for err in source.errors[:SHOWN_ERRORS]:
        click.echo(f"warning: {err}", err=True)
    if len(source.errors) > SHOWN_ERRORS:
        click.echo(f"warning: ... {len(source.errors) - SHOWN_ERRORS} more", err=True)
    if source.blocked:  # matchmaking could pair nobody: say why, never "played 0 matches"
        if progress.done:
            click.echo(f"played {progress.done} matches in {progress.elapsed:.0f}s, then stopped", err=True)
        raise UserError(source.blocked)
    click.echo(
        f"played {progress.done} matches in {progress.elapsed:.0f}s ({progress.rate:.1f}/min)"
        + (f", {progress.failed} attempt(s) failed" if progress.failed else "")
    )
    if source.errors:  # given up after MAX_ATTEMPTS each: the goal is not met, and the exit says so
        raise MatchesFailed(failed_line(name, source.errors, matches_left=len(source.errors) >= MAX_FAILED))
    if until_stable and not source.check_stable():
        who = "; ".join(f"{bot}: {why}" for bot, why in source.unstable[:SHOWN_ERRORS])
        more = (
            f" (+{len(source.unstable) - SHOWN_ERRORS} more)" if len(source.unstable) > SHOWN_ERRORS else ""
        )
        raise NotSettled(
            f"season {name} reached --max-matches {max_matches} with {len(source.unstable)} bot(s) not "
            f"settled: {who}{more}; the matches are kept: run it again with a higher --max-matches "
            f"(about {source.counts()[0] + source.matches_left} in all, estimated) or a wider --stable-ci"
        )
    if until_stable:
        click.echo(
            f"season {name} is settled: every active bot's place is known, or its interval within ±{stable_ci:g}"
        )


SHOWN_ERRORS = 5  # the given-up matches named one per line; the rest are counted


def failed_line(name: str, errors: list[str], *, matches_left: bool) -> str:
    """Why a run exits 4: how many matches were given up, the first one's reason, where to see them."""
    from arena.ladder.runner import MAX_ATTEMPTS

    stopped = (
        f"; the run stopped scheduling after {len(errors)} (the executor, not the bots, is likely broken)"
        if matches_left
        else ""
    )
    return (
        f"season {name}: {len(errors)} match(es) failed to play {MAX_ATTEMPTS} times each and were given "
        f"up{stopped}; the first: {errors[0][:300]}; `arena matches --season {name} --status failed` lists "
        "them (their details say why)"
    )


def source_status(store, name: str) -> str:
    """The season's state (a closing season's final matches have no target count)."""
    return store.season(name).status


def _play_options(command: F) -> F:
    """--concurrency, --sandbox and --executor: how run and close play their matches."""
    command = click.option(
        "--executor",
        type=click.Choice(["local", "celery"]),
        default="local",
        show_default=True,
        help=EXECUTOR_HELP,
    )(command)
    command = click.option("--sandbox", "launcher", default="bwrap", show_default=True, help=SANDBOX_HELP)(
        command
    )
    return click.option(
        "--concurrency", type=click.IntRange(1), default=None, help="Matches at once (default: one per core)."
    )(command)


@click.command("run")
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
    help="Play until every active bot is settled: past its 20 provisional matches, in the group that "
    "every bot has met (directly or through others), and separated from both neighbours in the standings (the 95% interval of each difference, or a perfect/zero score's "
    "bound, clears it), or its difference from a neighbour it is not separated from (or its own "
    "interval) within ±--stable-ci. The bar shows done/target (an estimate), the ETA and how many "
    "are settled; at --max-matches the run names who is not and exits 5.",
)
@click.option(
    "--stable-ci",
    type=click.FloatRange(min=0, min_open=True),
    default=STABLE_CI,
    show_default=True,
    help="Elo half-width for --until-stable: a tie between neighbours is settled within it.",
)
@click.option(
    "--max-matches",
    type=click.IntRange(1),
    default=MAX_MATCHES,
    show_default=True,
    help="The cap on the season's ladder matches for --until-stable (exit 5 if it is reached unsettled).",
)
@_play_options
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
    """Play NAME's matches with a live progress bar. Ctrl-C is safe; the same command resumes.

    \b
    Exit codes:
      0    the goal is met (--matches N recorded, or --until-stable settled)
      2    a usage error; or matchmaking can pair nobody
      3    the database or the broker was lost during the run
      4    matches failed to play (each given up after 3 attempts; the message
           gives the first reason and the command that lists them)
      5    --until-stable reached --max-matches before the season settled (the
           message names who is not settled; the same command with a higher
           --max-matches continues)
      130  interrupted (Ctrl-C); the same command resumes
    """
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
    play_season(
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


@click.command("close")
@click.argument("name")
@_play_options
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
    play_season(
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
