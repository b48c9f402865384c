"""The remote halves of `arena season` (arena/cli/season.py): the organiser's calls CreateSeason,
StartSeason, FreezeSeason, CloseSeason (admin token) and ListSeasons, printed as the local commands
print them. On a server its own match workers play the matches; nothing is played here."""

from __future__ import annotations

from typing import Any

import click

from arena.cli.remote import Remote, local_only


def create(
    remote: Remote,
    name: str,
    pairs: list[str],
    time_text: str | None,
    duplicate: bool,
    seed: int | None,
    anchors: dict[str, float],
    pair_same_owner: bool,
) -> Any:
    from arena.cli.challenge import time_control
    from arena.proto import arena_pb2 as pb

    if seed is not None:
        local_only(remote, "--seed")
    request = pb.CreateSeasonRequest(
        name=name,
        rules=pairs,
        time_control=time_control(time_text),
        duplicate=duplicate,
        anchors=anchors,
        pair_same_owner=pair_same_owner,
    )
    return remote.call("CreateSeason", request)


def step(remote: Remote, method: str, name: str) -> Any:
    from arena.proto import arena_pb2 as pb

    return remote.call(method, pb.SeasonRequest(name=name))


def start(remote: Remote, name: str) -> None:
    from arena.proto import arena_pb2 as pb

    info = step(remote, "StartSeason", name)
    table = remote.call("GetStandings", pb.GetStandingsRequest(season=name))
    n = sum(1 for r in table.rows if r.active)
    click.echo(f"season {name} {info.status} with {n} bots; the server's match workers play it")
    if n < 2:
        click.echo("note: fewer than two bots; submit some with `arena bots submit`", err=True)


def close(remote: Remote, name: str) -> None:
    info = step(remote, "CloseSeason", name)
    if info.status == "frozen":
        click.echo(f"season {name} closed and frozen; `arena standings {name}`")
        return
    click.echo(
        f"season {name}: final round robin queued on the server, {info.matches_pending} matches "
        "to play; it freezes when they are done (`arena season list` shows the state)"
    )


def seasons(remote: Remote) -> list[dict]:
    """ListSeasons as the rows of the local listing (oldest first; `matches`: matches done, as /api/seasons)."""
    from arena.proto import arena_pb2 as pb

    rows = []
    for x in reversed(remote.pages("ListSeasons", pb.ListSeasonsRequest(), "seasons")):
        tc = x.time_control
        clocks = {"startup": tc.startup_ms, "move": tc.move_ms, "bank": tc.bank_ms}
        rows.append(
            {
                "name": x.name,
                "status": x.status,
                "rules": list(x.rules),
                "time": {k: v / 1000 for k, v in clocks.items() if v},
                "duplicate": x.duplicate,
                "matches": x.matches_done,
                "created_at": x.created_at or None,
                "paused": x.paused,
            }
        )
    return rows
