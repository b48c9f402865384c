"""`arena matches`: the match list with filters, as the management API's ListMatches answers it.

One implementation for both places: remotely the server's ListMatches, locally the same operation
run in-process over the local store (arena.service.ops_results.list_matches). Results, seeds and
salts of a match stay hidden until it and its duplicate twin are over, in both places.
"""

from __future__ import annotations

import json
from typing import Any

import click

from arena.cli.remote import Remote, client_for, remote_options, with_remote

KINDS = ("ladder", "final", "compare", "challenge")
STATUSES = ("queued", "running", "done", "failed")


def match_row(x: Any) -> dict:
    """A MatchInfo as the JSON of `arena matches --json` (unrevealed fields are null)."""
    return {
        "id": x.id,
        "season": x.season or None,
        "kind": x.kind,
        "status": x.status,
        "players": list(x.players),
        "revealed": x.revealed,
        "winner": x.winner if x.revealed else None,
        "void": x.void,
        "verdicts": list(x.verdicts),
        "details": list(x.details),
        "lines": list(x.lines),
        "commitment": x.commitment,
        "seed": x.seed if x.has_seed else None,
        "salt": x.salt or None,
        "started_at": x.started_at or None,
        "finished_at": x.finished_at or None,
        "requested_by": x.requested_by or None,
    }


def result_text(r: dict) -> str:
    if not r["revealed"]:
        return "hidden" if r["status"] == "done" else "—"
    if r["void"]:
        return "void"
    if r["winner"] is None or r["winner"] < 0:
        return "draw"
    return f"{r['players'][r['winner']]} won"


@click.command()
@click.option("--season", default=None, help="Only this season's matches.")
@click.option("--bot", default=None, help="Only matches this bot (any version) played.")
@click.option("--verdict", default=None, help="Only revealed matches with this verdict, e.g. TIMEOUT.")
@click.option(
    "--kind", type=click.Choice(KINDS), default=None, help="Only this kind (default: all but challenges)."
)
@click.option("--status", type=click.Choice(STATUSES), default=None, help="Only matches in this state.")
@click.option("--limit", type=click.IntRange(1, 500), default=50, show_default=True, help="At most N.")
@click.option(
    "--after",
    type=click.IntRange(1),
    default=None,
    help="Only matches older than match ID (the next page: the last id shown, or the JSON's next_after).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON: {total, total_capped, next_after, matches: [...]}."
)
@remote_options
def matches(
    season: str | None,
    bot: str | None,
    verdict: str | None,
    kind: str | None,
    status: str | None,
    limit: int,
    after: int | None,
    as_json: bool,
    remote: Remote | None,
) -> None:
    """Matches, newest first: seats, state, result and deck commitment. Pages by match id:
    --after ID lists the matches older than ID.

    A match's result, seed and salt show only once it and every match dealing the same cards are
    over. Challenges are listed apart: --kind challenge.
    """
    from arena.proto import arena_pb2 as pb

    request = pb.ListMatchesRequest(
        season=season or "",
        bot=bot or "",
        verdict=verdict or "",
        kind=kind or "",
        status=status or "",
        limit=limit,
        page_token=str(after) if after else "",
    )
    answer = client_for(remote).call("ListMatches", request)
    rows = [match_row(x) for x in answer.matches]
    next_after = int(answer.next_page_token) if answer.next_page_token else None
    if as_json:
        document = {"total": answer.total, "total_capped": answer.total_capped, "next_after": next_after}
        click.echo(json.dumps({**document, "matches": rows}, indent=1))
        return
    if not rows:
        filtered = any((season, bot, verdict, kind, status, after))
        click.echo("no matches for these filters" if filtered else "no matches yet")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "season", "kind", "status", "players", "result", "verdicts", "finished")
    for r in rows:
        table.add_row(
            str(r["id"]),
            r["season"] or "",
            r["kind"],
            r["status"],
            " vs ".join(r["players"]),
            result_text(r),
            " ".join(r["verdicts"]),
            r["finished_at"] or "",
        )
    console = Console()
    console.print(table)
    if next_after is not None:
        total = f"{answer.total}+" if answer.total_capped else str(answer.total)
        console.print(f"{len(rows)} shown of {total}; --after {next_after} shows older ones")


matches.help = with_remote(matches.help, "Locally it reads the local store.")
