"""One page of a season's standings: the rows from a place on, or the page holding a named bot, with
each row's trend points, for the web, the JSON API, `GetStandings` and `arena standings` alike
(issue #30: a 2,000-bot table was a 1.2 MB page, and every reader sent every row).

A page is addressed by place: `after` rows of the whole table are skipped (0: from the top) and at
most `limit` rows follow. A place, not a rating, is the key because a leaderboard is read by place
("rows 101-200"), and its rows move between two requests whenever a result is recorded; the page
says which count of results it is of (`recorded`), so a reader can see that the table changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.ladder.los import LosAsk
from arena.ladder.standings import Standing, standings_with_los
from arena.ladder.tally import tally
from arena.store import Store
from arena.store.models import Bot, BotVersion, Entry, Season

PAGE = 100  # rows a page holds unless asked otherwise
PAGE_MAX = 500  # the most rows one page holds (a 500-row JSON page is about 150 KB)


class NoSuchRow(LookupError):
    """A page asked for a bot that has no row in the standings."""


@dataclass(frozen=True)
class StandingsPage:
    """Rows `first`..`first + len(rows) - 1` (1-based places) of a table of `total` rows."""

    season: Season
    rows: list[Standing]
    trends: list[tuple[float, ...]]  # each row's last rating points, oldest first (may be empty)
    first: int
    total: int
    recorded: int  # the season's results these standings are of
    limit: int
    focus: str | None = None  # the row of the bot asked for (name@version)
    los_bots: list[str] = field(default_factory=list)  # the LOS table asked for, if any
    los: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def after(self) -> int:
        """Rows of the table before this page."""
        return self.first - 1

    @property
    def next_after(self) -> int | None:
        """`after` of the next page (None: this is the last)."""
        end = self.after + len(self.rows)
        return end if end < self.total else None

    @property
    def prev_after(self) -> int | None:
        """`after` of the page before (None: this is the first)."""
        return max(0, self.after - self.limit) if self.after > 0 else None


def standings_page(
    store: Store,
    name: str,
    *,
    after: int = 0,
    limit: int = PAGE,
    bot: str = "",
    rated_only: bool = False,
    hide_suspended: bool = False,
    ask: LosAsk | None = None,
) -> StandingsPage:
    """A page of the season's standings (frozen or live, as `standings_with_los` gives them): rows
    `after + 1` on, at most `limit` (1..PAGE_MAX); with `bot` (NAME or NAME@VERSION), the page of
    `limit` rows holding that bot's best-placed row instead (NoSuchRow if it has none).
    `rated_only` leaves out the unrated rows (they come last), `hide_suspended` the suspended bots."""
    if not 1 <= limit <= PAGE_MAX:
        raise ValueError(f"limit {limit}: a page holds 1 to {PAGE_MAX} rows")
    if after < 0:
        raise ValueError(f"after {after}: a count of rows to skip, 0 or more")
    season, rows, labels, matrix = standings_with_los(store, name, ask)
    if rated_only:
        rows = [r for r in rows if r.rated]
    if hide_suspended:
        hidden = {r.bot for r in rows if r.suspended}
        rows = [r for r in rows if r.bot not in hidden]
        keep = [i for i, label in enumerate(labels) if label not in hidden]
        labels, matrix = [labels[i] for i in keep], matrix[keep][:, keep]
    focus = None
    if bot:
        at = _place_of(rows, bot)
        focus = rows[at].bot
        after = at - at % limit
    page = rows[after : after + limit]
    with store.read() as s:
        live = s.get_one(Season, season.id)
        trends = _trends(s, live, page)
        recorded = int(live.recorded or 0)
    return StandingsPage(
        season, page, trends, after + 1, len(rows), recorded, limit, focus, labels, np.asarray(matrix)
    )


def _place_of(rows: list[Standing], bot: str) -> int:
    """The index of `bot`'s row (NAME@VERSION exactly, or NAME: its best-placed version)."""
    exact = bot if "@" in bot else None
    for k, r in enumerate(rows):
        if r.bot == exact or (exact is None and r.bot.rpartition("@")[0] == bot):
            return k
    raise NoSuchRow(
        f"no row for bot {bot!r} in these standings; give a bot's name (or name@version) as the table shows it"
    )


def _trends(s: Session, season: Season, page: list[Standing]) -> list[tuple[float, ...]]:
    """Each page row's last rating points, from the season's tally (kept up to date by reading only
    new results: arena.ladder.tally), its entry found by one query over the page's bots only."""
    if not page:
        return []
    names = sorted({r.bot.rpartition("@")[0] for r in page})
    ids = {
        f"{name}@{number}": entry_id
        for entry_id, name, number in s.execute(
            select(Entry.id, Bot.name, BotVersion.number)
            .join(BotVersion, BotVersion.id == Entry.version_id)
            .join(Bot, Bot.id == BotVersion.bot_id)
            .where(Entry.season_id == season.id, Bot.name.in_(names))
        )
    }
    points = tally(s, season)[0].trends
    return [points.get(ids.get(r.bot, -1), ()) for r in page]
