"""Read-only access to the arena store for the web: one thin module, so that the pages and the API
never touch SQLAlchemy themselves and a change in the store's tables is fixed in one place.

Every method opens a short session and returns the pydantic shapes of `arena.web.schemas`.
What a spectator may see is decided in this layer only (this module, `match_data.py` for matches,
`reveal.py` for the rules): a match's result, seed, salt and replay once `arena.ladder.visibility`
says it is revealed, and of the arena's verdict sentences and suspension reasons only the first line
(the bot's own output never follows it onto a page).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session, joinedload

from arena.ladder.queries import MatchStatus, bot_record, rating_history, recent_matches
from arena.ladder.visibility import sealed_done, unrevealed_ids
from arena.store import Store
from arena.store import models as m

if TYPE_CHECKING:
    from arena.ladder.standings import Standing
from arena.web.match_data import MatchQueries, summaries
from arena.web.reveal import first_line
from arena.web.schemas import (
    BotOut,
    BotRating,
    HeadToHead,
    LogEntry,
    LogsOut,
    RatingPoint,
    SeasonOut,
    StandingRow,
    StandingsOut,
    VersionOut,
)

STANDINGS_PAGE = 100  # standings rows a page shows (arena.ladder.standings_page.PAGE)
PROVISIONAL_BELOW = 20  # rated matches; the ladder's K=40 threshold (issue 5 §3)
TREND_WINDOW = 10
OK = "OK"


class WebData(MatchQueries):
    """The store as the web sees it."""

    def __init__(self, url: str | None = None, home: str | Path | None = None) -> None:
        self.store = Store.open(url, home=home)  # migrates a fresh database, so an empty arena shows
        self.session = self.store.read  # read-only: page loads never queue behind a season's writes

    # ---- seasons and standings -------------------------------------------------------------
    def seasons(self) -> list[SeasonOut]:
        """Every season, newest first, with its finished matches: the season's `recorded` counter."""
        with self.session() as s:
            return _seasons(s)

    def default_season(self) -> str | None:
        """The season a visitor most likely wants (`arena.ladder.queries.default_season`)."""
        with self.session() as s:
            return _default_name(s)

    def standings(
        self, season_name: str | None = None, *, after: int = 0, limit: int = STANDINGS_PAGE, bot: str = ""
    ) -> StandingsOut | None:
        """A page of a season's standings (the default season when None): its rated rows `after + 1`
        on, at most `limit`, or the page holding `bot` (`arena.ladder.standings_page`); None if the
        season does not exist. NoSuchRow (a LookupError) if `bot` has no row."""
        with self.session() as s:  # one session for both: each costs the pool's ping and a transaction
            seasons = _seasons(s)
            name = season_name or _default_name(s)
        season_out = next((x for x in seasons if x.name == name), None)
        if name is None:
            return StandingsOut(season=None, seasons=seasons, source="live", rows=[], limit=limit)
        if season_out is None:
            return None
        from arena.ladder.standings_page import NoSuchRow, standings_page

        try:
            page = standings_page(self.store, name, after=after, limit=limit, bot=bot, rated_only=True)
        except NoSuchRow:
            raise
        except (ValueError, LookupError, ArithmeticError):
            return self._live_rows(season_out, seasons, after, limit)
        frozen = page.season.status == "frozen" and page.season.standings is not None
        rows = [_row(st, points) for st, points in zip(page.rows, page.trends, strict=True)]
        return StandingsOut(
            season=season_out,
            seasons=seasons,
            source="frozen" if frozen else "fit",
            rows=rows,
            first=page.first,
            total=page.total,
            limit=limit,
            next_after=page.next_after,
            prev_after=page.prev_after,
            focus=page.focus,
        )

    def _live_rows(
        self, season_out: SeasonOut, seasons: list[SeasonOut], after: int, limit: int
    ) -> StandingsOut:
        """No fit available (it failed): live Elo from the entries, a page of them, no trend."""
        with self.session() as s:
            season_id = s.scalars(select(m.Season.id).where(m.Season.name == season_out.name)).one()
            entries = s.scalars(select(m.Entry).where(m.Entry.season_id == season_id)).all()
            ordered = sorted(entries, key=lambda e: (-e.rating, e.version.bot.name))
            rows = [
                StandingRow(
                    rank=i,
                    bot=e.version.bot.name,
                    version=e.version.number,
                    elo=round(e.rating, 1),
                    live=round(e.rating, 1),
                    games=e.wins + e.draws + e.losses,
                    wins=e.wins,
                    draws=e.draws,
                    losses=e.losses,
                    provisional=e.rated < PROVISIONAL_BELOW,
                )
                for i, e in enumerate(ordered, 1)
            ]
        end = min(after + limit, len(rows))
        return StandingsOut(
            season=season_out,
            seasons=seasons,
            source="live",
            rows=rows[after:end],
            first=after + 1,
            total=len(rows),
            limit=limit,
            next_after=end if end < len(rows) else None,
            prev_after=max(0, after - limit) if after > 0 else None,
        )

    # ---- bots -----------------------------------------------------------------------------
    def bot_names(self, after: str = "", limit: int | None = None) -> list[str]:
        """Bot names in name order after `after`, at most `limit` (None: all), from the names' index."""
        with self.session() as s:
            q = select(m.Bot.name).order_by(m.Bot.name)
            if after:
                q = q.where(m.Bot.name > after)
            return list(s.scalars(q.limit(limit) if limit is not None else q))

    def bot(self, name: str, recent: int = 20) -> BotOut | None:
        """A bot's page: its versions, live Elo per season entry, the newest `HISTORY_SHOWN` revealed
        rating changes of each entry, its newest finished matches, its verdict counts and the
        `OPPONENTS_SHOWN` opponents it played most (`arena.ladder.queries`: a fixed number of
        statements, each reading a bounded number of rows whatever the bot's history)."""
        with self.session() as s:
            bot = (
                s.scalars(select(m.Bot).options(joinedload(m.Bot.versions)).where(m.Bot.name == name))
                .unique()
                .one_or_none()
            )
            if bot is None:
                return None
            version_ids = [v.id for v in bot.versions]
            numbers = {v.id: v.number for v in bot.versions}
            rows = (
                s.execute(
                    select(m.Entry, m.Season.name)
                    .join(m.Season, m.Season.id == m.Entry.season_id)
                    .where(m.Entry.version_id.in_(version_ids))
                    .order_by(m.Entry.id)
                ).all()
                if version_ids
                else []
            )
            entries = [e for e, _ in rows]
            season_names: dict[int | None, str] = {e.season_id: name for e, name in rows}
            sealed = sealed_done(s, version_ids)  # its finished matches not revealed yet
            ratings = [
                BotRating(
                    season=season_names.get(e.season_id, "?"),
                    version=numbers[e.version_id],
                    rating=round(e.rating, 1),
                    games=e.wins + e.draws + e.losses,
                    provisional=e.rated < PROVISIONAL_BELOW,
                )
                for e in entries
            ]
            history = [
                RatingPoint(
                    match_id=step.match_id,
                    season=season_names.get(step.season_id, "?"),
                    at=step.at,
                    rating=round(step.rating, 1),
                )
                for step in rating_history(s, [e.id for e in entries], sealed)
            ]
            latest = recent_matches(s, version_ids, recent, MatchStatus.DONE, challenges=False)
            challenged = recent_matches(s, version_ids, recent, MatchStatus.DONE, challenges=True)
            record = bot_record(s, bot.id, version_ids, sealed=sealed)  # over revealed matches only
            return BotOut(
                name=bot.name,
                owner=bot.owner,
                retired=bot.retired,
                suspended=bot.suspended,
                suspension_reason=first_line(bot.suspension_reason) or None,
                versions=[
                    VersionOut(
                        number=v.number,
                        content_hash=v.content_hash,
                        language=v.language,
                        protocol=v.protocol,
                        created_at=v.created_at,
                        build_ok=v.build_ok,
                    )
                    for v in bot.versions
                ],
                ratings=ratings,
                history=history,
                recent=summaries(s, latest),
                challenges=summaries(s, challenged),
                head_to_head=[
                    HeadToHead(opponent=h.name, games=h.games, wins=h.wins, draws=h.draws, losses=h.losses)
                    for h in record.head_to_head
                ],
                opponents=record.opponents,
                verdicts=dict(sorted(record.verdicts.items())),
            )

    def bot_owner(self, name: str) -> str | None:
        with self.session() as s:
            return s.scalars(select(m.Bot.owner).where(m.Bot.name == name)).one_or_none()

    def logs(self, name: str, limit: int = 20, *, unrevealed: bool = False) -> LogsOut | None:
        """The bot's build logs and its own seat's match logs (the caller checks the owner's token).

        A match's logs are held back until it and its twin are over (a log may quote the bot's hand,
        which its twin's opponent holds), unless `unrevealed` (the admin) asks for them too."""
        held = 0
        with self.session() as s:
            bot = s.scalars(select(m.Bot).where(m.Bot.name == name)).one_or_none()
            if bot is None:
                return None
            logs = [LogEntry(version=v.number, text=v.build_log or "") for v in bot.versions]
            ids = {v.id: v.number for v in bot.versions}
            if ids:
                q = (
                    select(m.MatchLog, m.Match)
                    .join(m.Match, m.Match.id == m.MatchLog.match_id)
                    .where(or_(m.Match.version0_id.in_(ids), m.Match.version1_id.in_(ids)))
                    .order_by(m.Match.id.desc())
                )
                rows = [
                    (log, match)
                    for log, match in s.execute(q)
                    if (match.version0_id if log.seat == 0 else match.version1_id) in ids
                ]
                sealed = set() if unrevealed else unrevealed_ids(s, {match for _, match in rows})
                for log, match in rows:
                    seat_version = match.version0_id if log.seat == 0 else match.version1_id
                    if match.id in sealed:
                        held += 1
                    elif len(logs) < limit + len(bot.versions):
                        logs.append(
                            LogEntry(
                                match_id=match.id, version=ids[seat_version], seat=log.seat, text=log.text
                            )
                        )
            return LogsOut(bot=bot.name, logs=logs, held=held)


# ---- helpers ----------------------------------------------------------------------------------
def _row(st: Standing, points: tuple[float, ...]) -> StandingRow:
    """A ladder standings row as the web shows it, with its trend over the last TREND_WINDOW."""
    bot, _, version = st.bot.rpartition("@")
    interval = st.ci95 if st.ci95 is not None and st.ci95 == st.ci95 and st.ci95 != float("inf") else None
    recent = [round(p, 1) for p in points[-TREND_WINDOW - 1 :]]
    assert st.elo is not None  # the web's pages are of rated rows (rated_only)
    return StandingRow(
        rank=st.rank,
        bot=bot or st.bot,
        version=int(version) if version.isdigit() else None,
        elo=st.elo,
        interval=interval,
        bound=st.bound,
        live=st.live_elo,
        games=st.games,
        wins=st.wins,
        draws=st.draws,
        losses=st.losses,
        provisional=st.provisional,
        los_next=st.los_next,
        recent=recent,
        trend=round(recent[-1] - recent[0], 1) if len(recent) > 1 else 0.0,
    )


SEASON_COLUMNS = ("name", "status", "rules", "duplicate", "recorded", "created_at", "paused")


def _seasons(s: Session) -> list[SeasonOut]:
    # the listed columns only: not a frozen season's stored standings
    columns = (getattr(m.Season, c) for c in SEASON_COLUMNS)
    rows = s.execute(select(*columns).order_by(m.Season.created_at.desc(), m.Season.id.desc())).all()
    return [_season(r, r.recorded or 0) for r in rows]


def _default_name(s: Session) -> str | None:
    from arena.ladder.queries import default_season

    found = default_season(s)
    return found.name if found is not None else None


def _season(row: Any, matches: int) -> SeasonOut:
    return SeasonOut(
        name=row.name,
        status=row.status,
        rules=list(row.rules or []),
        duplicate=row.duplicate,
        matches=matches,
        created_at=row.created_at,
        paused=bool(getattr(row, "paused", False)),
    )
