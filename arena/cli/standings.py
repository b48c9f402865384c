"""`arena standings [SEASON]`: rank, bot, Elo ± 95%, games, W/D/L and the provisional mark."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import click

from arena.cli.errors import UserError
from arena.cli.ladder_common import open_store, user_errors
from arena.cli.remote import Remote, remote_options, with_remote


def _default_season(store) -> str:
    """The season shown when none is named: the web's and the API's choice (arena.ladder.queries)."""
    from arena.ladder.queries import default_season

    with store.read() as s:
        found = default_season(s)
        if found is None:
            raise UserError("no seasons yet; create one with `arena season create NAME`")
        return found.name


GROUPS_NOTE = (
    "{n} groups of bots never met, directly or through others: each group is anchored on its own and "
    "ranked within itself; ratings in different groups cannot be compared"
)


# The keys of a row that the HTTP API's standings row (arena/web/schemas.py StandingRow) lacks; every
# other key is the API's, with its meaning (tests/cli/test_json_keys.py compares them).
CLI_ONLY_ROW_KEYS = frozenset({"label", "owner", "active", "rated", "group", "anchor", "suspended"})


def row_json(r) -> dict:  # a ladder Standing
    """One standings row as `--json` prints it, keyed as `/api/standings`: `bot` the name, `version`
    its number, `interval` the ± half-width, `live` the live Elo; `label` is `bot@version`."""
    d = r.to_dict()
    name, _, number = r.bot.rpartition("@")
    d["bot"], d["version"], d["label"] = name or r.bot, int(number) if number.isdigit() else None, r.bot
    d["interval"], d["live"] = d.pop("ci95"), d.pop("live_elo")
    return d


def document(info, rows: list, labels: list[str] | None, matrix, place: Place | None = None) -> dict:
    """The `--json` document (the same figures locally and from GetStandings): one page of rows,
    where it sits in the whole table (`first`, `total`) and the next page's `--after`."""
    from arena.ladder.standings import groups_summary

    groups = groups_summary(rows)
    place = place or Place(1, len(rows), None)
    return {
        "season": info.name,
        "status": info.status,
        "first": place.first,
        "total": place.total,
        "next_after": place.next_after,
        "rows": [row_json(r) for r in rows],
        "groups": groups,
        "comparable": len(groups) <= 1,  # False: ranks and ratings hold within each group only
        "unrated": [r.bot for r in rows if not r.rated],
        "los": None
        if labels is None
        else {
            "bots": labels,
            "matrix": [[None if x != x else round(float(x), 4) for x in row] for row in matrix],
        },
    }


@click.command()
@click.argument("season", required=False)
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (each row's LOS over the next; a LOS table if asked)."
)
@click.option(
    "--los", is_flag=True, help="Also print a likelihood-of-superiority table: the top bots (see --los-top)."
)
@click.option(
    "--los-top", type=int, default=0, help="The table's top N bots (default 10 with --los; at most 32)."
)
@click.option(
    "--los-bot",
    "los_bots",
    multiple=True,
    metavar="NAME@V",
    help="The table among these bots (repeat: a pair).",
)
@click.option("--hide-suspended", is_flag=True, help="Leave suspended bots out of the table.")
@click.option(
    "--limit",
    type=click.IntRange(1, 500),
    default=100,
    show_default=True,
    help="Rows to print: one page of the table (at most 500).",
)
@click.option(
    "--after",
    type=click.IntRange(0, 10**9),
    default=0,
    help="Skip this many rows of the table first (the next page: the `--after` the page's footer names).",
)
@click.option(
    "--bot", "find", default="", metavar="NAME", help="The page holding this bot's row (NAME or NAME@V)."
)
@remote_options
def standings(
    season: str | None,
    as_json: bool,
    los: bool,
    los_top: int,
    los_bots: tuple[str, ...],
    hide_suspended: bool,
    limit: int,
    after: int,
    find: str,
    remote: Remote | None,
) -> None:
    """SEASON's standings (default: the newest running season).

    Elo is the season's maximum-likelihood fit (draws as half points, mean 1500 or the season's
    anchors) with its 95% interval (widened by twice the prior's pull where the prior pulls an
    estimate towards its opponents: the extremes of a sparse or wide ladder); live is the running Elo (K=40 while provisional, marked *, then
    20); LOS↓ the probability that a bot is stronger than the next one. Bots without a counted game
    are unrated; a perfect (zero) score shows only its lower (upper) bound, ≥ (≤): the rating at which that score had
    a 2.5% chance; bots in groups
    that never met are ranked within their group. A LOS table is printed only when asked, of at
    most 32 bots (--los, --los-top, --los-bot): never the whole ladder's.
    """
    from arena.ladder.standings import LosAsk

    if los and not los_top and not los_bots:
        los_top = 10
    ask = LosAsk(top=los_top, bots=los_bots) if (los_top or los_bots) else None
    if remote is not None:
        info, rows, labels, matrix, place = _remote(remote, season or "", ask, after, limit, find)
        if hide_suspended:  # within the page the server sent
            hidden = {r.bot for r in rows if r.suspended}
            rows = [r for r in rows if r.bot not in hidden]
            keep = [i for i, label in enumerate(labels) if label not in hidden]
            labels, matrix = [labels[i] for i in keep], [[matrix[i][j] for j in keep] for i in keep]
    else:
        from arena.ladder.standings import LosError
        from arena.ladder.standings_page import NoSuchRow, standings_page

        store = open_store()
        name = season or _default_season(store)
        with user_errors(), fit_errors(name):
            try:
                page = standings_page(
                    store, name, after=after, limit=limit, bot=find, hide_suspended=hide_suspended, ask=ask
                )
            except (LosError, NoSuchRow) as exc:
                raise UserError(str(exc)) from None
        info, rows, labels, matrix = page.season, page.rows, page.los_bots, page.los
        place = Place(page.first, page.total, page.next_after)
    import numpy as np

    matrix = np.asarray(matrix, dtype=float).reshape(len(labels), len(labels))
    if as_json:  # the same document from the local store and from a server's GetStandings
        click.echo(json.dumps(document(info, rows, labels if ask else None, matrix, place), indent=1))
        return
    _print(info, rows, labels, matrix, ask is not None)
    if place.first > 1 or place.next_after is not None:
        more = f"; the next: --after {place.next_after}" if place.next_after is not None else ""
        click.echo(f"rows {place.first}-{place.first + len(rows) - 1} of {place.total}{more}")


@contextlib.contextmanager
def fit_errors(name: str) -> Iterator[None]:
    """A season fit that cannot give honest figures says so in one line (never a traceback)."""
    from arena.ladder.ratings import FitError

    try:
        yield
    except FitError as exc:
        raise UserError(f"season {name}: {exc}; no standings shown rather than wrong ones") from None


@dataclass(frozen=True)
class Place:
    """Where a page of rows sits in the whole table."""

    first: int  # the place (1-based) of its first row
    total: int  # rows in the whole table
    next_after: int | None  # --after of the next page (None: the last)


def _remote(remote: Remote, season: str, ask, after: int, limit: int, find: str):
    """GetStandings as the local computation's (season, rows, LOS labels, LOS matrix, Place)."""
    from types import SimpleNamespace

    from arena.ladder.standings import Standing
    from arena.proto import arena_pb2 as pb

    request = pb.GetStandingsRequest(
        season=season, limit=limit, page_token=str(after) if after else "", bot=find
    )
    if ask is not None:
        request.los_top, request.los_around = ask.top, ask.around
        request.los_bots.extend(ask.bots)
    answer = remote.call("GetStandings", request)
    rows = [
        Standing(
            rank=r.rank,
            bot=r.bot,
            owner=r.owner,
            elo=r.elo if not r.unrated else None,
            ci95=r.ci95 if r.has_ci95 else None,
            live_elo=r.live_elo,
            games=r.games,
            wins=r.wins,
            draws=r.draws,
            losses=r.losses,
            provisional=r.provisional,
            active=r.active,
            rated=not r.unrated,
            group=r.group or (0 if r.unrated else 1),
            bound=r.bound or None,
            anchor=r.anchor,
            suspended=r.suspended,
            los_next=r.los_next if r.has_los_next else None,
        )
        for r in answer.rows
    ]
    matrix = [list(row.values) for row in answer.los]
    place = Place(
        answer.first or 1, answer.total, int(answer.next_page_token) if answer.next_page_token else None
    )
    info = SimpleNamespace(name=answer.season, status=answer.status)
    return info, rows, list(answer.los_bots), matrix, place


def _print(info, rows, labels, matrix, los: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not any(r.rated for r in rows):
        click.echo(f"{info.name} ({info.status}): no rated games yet; {len(rows)} bots entered")
        return
    groups = sorted({r.group for r in rows if r.rated})
    table = Table(title=f"{info.name} ({info.status})")
    columns = ["rank", "bot", "Elo", "±95%", "games", "W", "D", "L", "live", "LOS↓"]
    if len(groups) > 1:
        columns.insert(1, "group")
    for col in columns:
        table.add_column(col, justify="left" if col == "bot" else "right")
    for r in rows:
        mark = "*" if r.provisional and r.rated else ""
        state = " (suspended)" if r.suspended else "" if r.active else " (inactive)"
        ci = (
            "anchor"
            if r.anchor
            else f"{r.bound} bound"
            if r.bound
            else "—"
            if r.ci95 is None
            else f"{r.ci95:.0f}"
        )
        cells = [
            str(r.rank) if r.rated else "—",
            r.bot + state,
            r.shown_elo + mark,
            ci,
            str(r.games),
            str(r.wins),
            str(r.draws),
            str(r.losses),
            f"{r.live_elo:.0f}",
            "" if r.los_next is None else f"{r.los_next:.2f}",
        ]
        if len(groups) > 1:
            cells.insert(1, str(r.group) if r.rated else "—")
        table.add_row(*cells)
    console.print(table)
    console.print("* provisional: fewer than 20 rated matches; LOS↓: the chance it is stronger than the next")
    if any(r.bound for r in rows):
        console.print(
            "≥ / ≤: a perfect / zero score; the figure is a 97.5% lower / upper bound, not an estimate"
        )
    if any(not r.rated for r in rows):
        console.print("unrated: no counted game yet, left out of the fit")
    if len(groups) > 1:
        console.print(GROUPS_NOTE.format(n=len(groups)))
    if los and len(labels) > 1:
        _print_los(console, rows, labels, matrix, len(groups) > 1)


def _print_los(console, rows, labels, matrix, grouped: bool) -> None:
    """Rows in rank order, each column labelled by its row's rank (group.rank when grouped)."""
    from rich.table import Table

    by_bot = {r.bot: r for r in rows}
    keys = [f"{by_bot[b].group}.{by_bot[b].rank}" if grouped else str(by_bot[b].rank) for b in labels]
    m = Table(title="likelihood of superiority (row better than column)")
    m.add_column("rank")
    m.add_column("bot")
    for key in keys:
        m.add_column(key, justify="right")
    for key, label, row in zip(keys, labels, matrix, strict=True):
        m.add_row(key, label, *["—" if x != x else f"{x:.2f}" for x in row])
    console.print(m)
    console.print(
        "columns are labelled by rank: column k is the bot ranked k (its row)"
        + ("; group.rank; — : different groups, cannot be compared" if grouped else "")
    )


standings.help = with_remote(standings.help)
