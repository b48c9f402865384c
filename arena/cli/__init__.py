"""The `arena` command. Subcommands live in sibling modules and are imported lazily, so that
`arena --help` and quick commands do not pay for gRPC, SQLAlchemy or FastAPI imports."""

from __future__ import annotations

import gc
import importlib
import sys

import click

# name -> (module, attribute, one-line help). Each module owns one subcommand (or group).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "admin": ("arena.cli.admin", "admin", "Back up, restore and audit the store (organiser, local)."),
    "demo": ("arena.cli.demo", "demo", "Run the main job: a sample match now, a sandboxed season later."),
    "bench": ("arena.cli.bench", "bench", "Benchmarks that print figures against a same-run baseline."),
    "replay": ("arena.cli.replay", "replay", "Verify, show and export match records."),
    "play": ("arena.cli.play", "play", "Play one match between two bot bundles and write its replay."),
    "new": ("arena.cli.new", "new", "Write a ready starter bot for a language into a new folder."),
    "serve": ("arena.cli.serve", "serve", "Run the gRPC referee server on a Unix socket and/or TCP."),
    "sandbox": ("arena.cli.sandbox", "sandbox", "Check what the bot sandbox enforces on this machine."),
    "web": ("arena.cli.web", "web", "Serve standings, bots, matches and the replay viewer in a browser."),
    "bots": (
        "arena.cli.bots",
        "bots",
        "Submit, list, show and retire ladder bots (content-hashed versions).",
    ),
    "owners": ("arena.cli.owners", "owners", "Create owners and manage their API tokens (organiser)."),
    "season": ("arena.cli.season", "season", "Create, start, run, freeze and close ladder seasons."),
    "standings": ("arena.cli.standings", "standings", "A season's standings: Elo with 95% intervals, W/D/L."),
    "matches": (
        "arena.cli.matches",
        "matches",
        "List matches with filters (season, bot, verdict, kind, state).",
    ),
    "challenge": (
        "arena.cli.challenge",
        "challenge",
        "Queue an unrated match between your bot and any active bot.",
    ),
    "watch": (
        "arena.cli.watch",
        "watch",
        "Follow a match live on a server, trick by trick (one trick behind).",
    ),
    "export": ("arena.cli.export", "export", "Export a season's revealed moves as a training dataset."),
    "compare": (
        "arena.cli.compare",
        "compare",
        "Is bot A better than bot B? Paired matches until an SPRT decides.",
    ),
    "workers": (
        "arena.cli.workers",
        "workers",
        "List the workers playing matches; drain one before taking it down (organiser).",
    ),
    "worker": (
        "arena.cli.worker",
        "worker",
        "A Celery worker playing ladder matches (scale-out, Redis broker).",
    ),
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module only when it is invoked."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(module), attr)

    def invoke(self, ctx: click.Context) -> object:
        """Run the subcommand; a lost database or broker becomes one line and exit 3, a missing
        optional extra one line naming it and exit 2 (errors.py)."""
        from arena.cli.errors import lost_service, missing_extra

        try:
            return super().invoke(ctx)
        except click.ClickException:
            raise
        except ImportError as exc:
            missing = missing_extra(exc)
            if missing is None:
                raise
            raise missing from None
        except Exception as exc:
            lost = lost_service(exc)
            if lost is None:
                raise
            raise lost from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="elfern-arena")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"], case_sensitive=False),
    default=None,
    help="Log to stderr at this level, one line per event, with the match id where there is one "
    "(default: info for `serve` and `web`, no logging set up for other commands; `worker` has Celery's "
    "own --loglevel). Also ARENA_LOG_LEVEL.",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"], case_sensitive=False),
    default=None,
    help="text (default): one line per event; json: one JSON object per line (ts, level, logger, msg, "
    "match, request), for a log shipper. Also ARENA_LOG_FORMAT; worker processes inherit it.",
)
def cli(log_level: str | None, log_format: str | None) -> None:
    """Elfern Arena: bots play the German card game Elfern for Elo rating.

    Start with `arena play BOT_A BOT_B` to play one match, `arena replay show last` to watch it,
    and `arena season --help` to run a ladder.

    Against a remote `arena serve`, set ARENA_SERVER=HOST:PORT and ARENA_API_TOKEN=elf_... (or pass
    --server / --api-token): bots, standings, matches, replay, challenge, watch, season and
    `owners list` then talk to that server (docs/remote.md).
    """
    import os

    from arena.logs import ENV, FORMAT_ENV, LevelError, configure

    if log_format:  # for `serve`, `web` and the workers, which set up logging themselves
        os.environ[FORMAT_ENV] = log_format.lower()
    # Only when asked: a short command's one-line errors stay alone on stderr (a library retrying a
    # lost broker logs at ERROR), while `serve`, `web` and the pool's workers always set it up.
    if log_level or os.environ.get(ENV):
        try:
            configure(log_level)
        except LevelError as exc:  # a bad ARENA_LOG_LEVEL (the option itself is checked by click)
            raise click.UsageError(str(exc)) from None


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point."""
    try:
        cli.main(args=argv, prog_name="arena", standalone_mode=True)
    except SystemExit as exc:  # click exits; keep the code
        return int(exc.code or 0)
    finally:
        # The command is done. The interpreter's teardown would now search every object of the
        # imported modules for garbage cycles, 15 of the 22 ms of CPU `arena play` spent exiting;
        # frozen, they are left to the kernel. Exit handlers still run and every file the commands
        # write is closed by a `with`, so nothing waits on that collection.
        gc.freeze()
    return 0


if __name__ == "__main__":
    sys.exit(main())
