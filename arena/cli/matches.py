"""`arena matches`: the match list with filters, as the management API's ListMatches answers it.

One implementation for both places: remotely the server's ListMatches, locally the same operation
run in-process over the local store (arena.service.ops_results.list_matches). Results, seeds and
salts of a match stay hidden until it and its duplicate twin are over, in both places.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import click

from arena.cli.remote import Remote, client_for, remote_options, with_remote

KINDS = ("ladder", "final", "compare", "challenge")
STATUSES = ("queued", "running", "done", "failed")


# The keys of a row that the HTTP API's match (`/api/matches/{id}`, arena/web/schemas.py MatchOut)
# does not have; every other key is the API's, with the API's meaning (tests/cli/test_json_keys.py).
CLI_ONLY_KEYS = frozenset({"started_at", "requested_by"})


def match_row(x: Any) -> dict:
    """A MatchInfo as the JSON of `arena matches --json`, keyed as the HTTP API's match (`bots` per
    seat, `versions` as `bot@version` per seat); unrevealed fields are null."""
    return {
        "id": x.id,
        "season": x.season or None,
        "kind": x.kind,
        "status": x.status,
        "bots": [p.rsplit("@", 1)[0] for p in x.players],
        "versions": list(x.players),
        "revealed": x.revealed,
        "winner": x.winner if x.revealed else None,
        "void": x.void,
        "void_reason": x.void_reason or None,  # the organiser voided it, for this reason
        "verdicts": list(x.verdicts),
        "verdict_details": list(x.details),
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
    return f"{r['versions'][r['winner']]} won"


@dataclass(frozen=True)
class Filters:
    """What `arena matches` was asked to list, to say what it left out."""

    season: str | None
    bot: str | None
    verdict: str | None
    kind: str | None
    status: str | None
    after: int | None

    def words(self) -> str:
        """` in season autumn, for bot alice`: the filters but kind and status, in words ("" for none)."""
        parts = [f"in season {self.season}"] if self.season else []
        parts += [f"for bot {self.bot}"] if self.bot else []
        parts += [f"with verdict {self.verdict}"] if self.verdict else []
        parts += [f"older than match {self.after}"] if self.after else []
        return (" " + ", ".join(parts)) if parts else ""

    def what(self) -> str:
        """`queued final matches`: the kind and the status, before the word."""
        return " ".join(x for x in (self.status, self.kind, "matches") if x)

    def args(self) -> str:
        """The same filters as options, but --kind: ` --bot alice --status done`."""
        pairs = (("--season", self.season), ("--bot", self.bot), ("--verdict", self.verdict),
                 ("--status", self.status), ("--after", self.after))  # fmt: skip
        return "".join(f" {flag} {value}" for flag, value in pairs if value)


def count_challenges(client: Any, f: Filters) -> str | None:
    """`3 challenges`: the challenges the same filters find (the list leaves them out unless --kind
    challenge), or None when there are none, or with --season (a challenge belongs to no season)."""
    from arena.proto import arena_pb2 as pb

    if f.season:
        return None
    request = pb.ListMatchesRequest(
        bot=f.bot or "", verdict=f.verdict or "", kind="challenge", status=f.status or "", limit=1,
        page_token=str(f.after) if f.after else "",
    )  # fmt: skip
    answer = client.call("ListMatches", request)
    if not answer.total:
        return None
    plus = "+" if answer.total_capped else ""
    return f"{answer.total}{plus} challenge{'s' if answer.total != 1 or plus else ''}"


def empty_line(f: Filters, challenges: str | None) -> str:
    """What an empty listing says: which matches there are none of, and the challenges it left out."""
    if challenges:
        return (
            f"no {f.what()}{f.words()} other than challenges; {challenges}: "
            f"`arena matches --kind challenge{f.args()}` lists them"
        )
    if f.kind or f.status or f.words():
        return f"no {f.what()}{f.words()}"
    return "no matches yet"


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
    over. Challenges are listed apart (--kind challenge); the listing says how many it left out.
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
    client = client_for(remote)
    answer = client.call("ListMatches", request)
    rows = [match_row(x) for x in answer.matches]
    next_after = int(answer.next_page_token) if answer.next_page_token else None
    if as_json:
        document = {
            "total": answer.total,
            "total_capped": answer.total_capped,
            "limit": limit,
            "next_after": next_after,
        }
        click.echo(json.dumps({**document, "matches": rows}, indent=1))
        return
    filters = Filters(season, bot, verdict, kind, status, after)
    challenges = None if kind else count_challenges(client, filters)
    if not rows:
        click.echo(empty_line(filters, challenges))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "season", "kind", "status", "bots", "result", "verdicts", "finished")
    for r in rows:
        table.add_row(
            str(r["id"]),
            r["season"] or "",
            r["kind"],
            r["status"],
            " vs ".join(r["versions"]),
            result_text(r),
            " ".join(r["verdicts"]),
            r["finished_at"] or "",
        )
    console = Console()
    console.print(table)
    if next_after is not None:
        total = f"{answer.total}+" if answer.total_capped else str(answer.total)
        console.print(f"{len(rows)} shown of {total}; --after {next_after} shows older ones")
    if challenges:
        console.print(f"not listed: {challenges}; `arena matches --kind challenge{filters.args()}`")


matches.help = with_remote(matches.help, "Locally it reads the local store.")
