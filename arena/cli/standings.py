"""`arena standings [SEASON]`: rank, bot, Elo ± 95%, games, W/D/L and the provisional mark."""

from __future__ import annotations

import json

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import open_store, user_errors
from arena.cli.remote import Remote, remote_options, with_remote


def _default_season(store) -> str:  # noqa: ANN001
    seasons = store.seasons()
    if not seasons:
        raise UserError("no seasons yet; create one with `arena season create NAME`")
    live = [s for s in seasons if s.status in ("running", "closing")]
    return (live or seasons)[-1].name


@click.command()
@click.argument("season", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (with the likelihood-of-superiority matrix)."
)
@click.option("--los", is_flag=True, help="Also print the likelihood-of-superiority matrix.")
@remote_options
def standings(season: str | None, as_json: bool, los: bool, remote: Remote | None) -> None:
    """SEASON's standings (default: the newest running season).

    Elo is the season's maximum-likelihood fit (draws as half points, mean 1500) with its 95%
    interval; live is the running Elo (K=40 while provisional, marked *, then 20).
    """
    if remote is not None:
        info, rows, labels, matrix = _remote(remote, season or "")
    else:
        from arena.ladder.standings import los_table
        from arena.ladder.standings import standings as compute

        store = open_store()
        name = season or _default_season(store)
        with user_errors():
            info, rows = compute(store, name)
            labels, found = los_table(store, name)
        matrix = [[round(float(x), 4) for x in row] for row in found]
    if as_json:  # the same document from the local store and from a server's GetStandings
        out = {
            "season": info.name,
            "status": info.status,
            "standings": [r.to_dict() for r in rows],
            "los": {"bots": labels, "matrix": matrix},
        }
        click.echo(json.dumps(out, indent=1))
        return
    _print(info, rows, labels, matrix, los)


def _remote(remote: Remote, season: str):  # noqa: ANN202 - (season-like, [Standing])
    """GetStandings as the local computation's (season, rows, LOS labels, LOS matrix)."""
    from types import SimpleNamespace

    from arena.ladder.standings import Standing
    from arena.proto import arena_pb2 as pb

    answer = remote.call("GetStandings", pb.GetStandingsRequest(season=season))
    rows = [
        Standing(
            rank=r.rank,
            bot=r.bot,
            owner=r.owner,
            elo=r.elo,
            ci95=r.ci95 if r.has_ci95 else None,
            live_elo=r.live_elo,
            games=r.games,
            wins=r.wins,
            draws=r.draws,
            losses=r.losses,
            provisional=r.provisional,
            active=r.active,
        )
        for r in answer.rows
    ]
    matrix = [list(row.values) for row in answer.los]
    return SimpleNamespace(name=answer.season, status=answer.status), rows, list(answer.los_bots), matrix


def _print(info, rows, labels, matrix, los: bool) -> None:  # noqa: ANN001
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{info.name} ({info.status})")
    for col in ("rank", "bot", "Elo", "±95%", "games", "W", "D", "L", "live"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for r in rows:
        mark = "*" if r.provisional else ""
        name_cell = r.bot + ("" if r.active else " (inactive)")
        ci = "—" if r.ci95 is None else f"{r.ci95:.0f}"
        table.add_row(
            str(r.rank),
            name_cell,
            f"{r.elo:.0f}{mark}",
            ci,
            str(r.games),
            str(r.wins),
            str(r.draws),
            str(r.losses),
            f"{r.live_elo:.0f}",
        )
    console = Console()
    console.print(table)
    console.print("* provisional: fewer than 20 rated matches")
    if los and len(labels) > 1:
        m = Table(title="likelihood of superiority (row better than column)")
        m.add_column("")
        for label in labels:
            m.add_column(label, justify="right")
        for label, row in zip(labels, matrix, strict=True):
            m.add_row(label, *[f"{x:.2f}" for x in row])
        console.print(m)


standings.help = with_remote(standings.help)
