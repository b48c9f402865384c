"""`arena season`: create, start, run, freeze and close ladder seasons, and audit their ratings."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena.cli import season_controls, season_play
from arena.cli.errors import UserError
from arena.cli.ladder_common import (
    open_store,
    parse_rules,
    parse_time,
    user_errors,
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

    create, start, freeze, close, list and the organiser's controls (pause, resume, requeue, void,
    recompute) also work against a remote `arena serve` with --server (ARENA_SERVER) and the admin
    token as --api-token (ARENA_API_TOKEN); the server's workers then play the matches (run, verify
    and export work on the local store only).
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


@season.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@remote_options
def list_(as_json: bool, remote: Remote | None) -> None:
    """All seasons with their state and match counts (remotely: ListSeasons, anyone)."""
    if remote is not None:
        from arena.cli import season_remote

        _print_seasons(season_remote.seasons(remote), as_json)
        return
    from arena.service.convert import iso

    rows = [
        {
            "name": s.name,
            "status": s.status,
            "rules": s.rules,
            "time": s.time_control,
            "duplicate": s.duplicate,
            "matches": s.recorded,
            "created_at": iso(s.created_at) or None,  # as ListSeasons sends it
            "paused": bool(s.paused),
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
            f"{r['name']:<16} {r['status'] + (' (paused)' if r.get('paused') else ''):<8} {r['matches']:>6} matches  rules: {' '.join(r['rules']) or 'default'}"
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


season.add_command(season_play.run)
season.add_command(season_play.close)
for _control in season_controls.COMMANDS:
    season.add_command(_control)
