"""Which bot versions hold a season's entries: each eligible bot's newest built ladder version, entered
with a starting rating, the others deactivated (`sync_entries`), and the one-query test of whether
that would change anything (`entries_in_sync`), which the matchmaking asks when the registry's count
of changes (`registry_rev`, kept by database triggers: migration 0013) moved since the season was last
found in sync (`Season.synced_rev`), so a pairing reads no registry row in the usual case.
"""

from __future__ import annotations

import logging

from sqlalchemy import ScalarSelect, Select, and_, exists, func, or_, select
from sqlalchemy.orm import Session

from arena.store.models import Bot, BotVersion, Entry, RegistryRev, Season

log = logging.getLogger(__name__)


def sync_entries(s: Session, season: Season) -> None:
    """Enter each eligible bot's newest built ladder version; deactivate older versions, retired and
    suspended bots. Versions registered by `arena compare` (ladder=False) enter only once an
    organiser adds them (`add_version`). A new entry's live Elo starts from the season fit of the
    bot's previous version, else from the pool's mean (zero-sum updates keep it), provisional.

    The matchmaking calls it before every pairing; `entries_in_sync` tells first, from one narrow
    query, whether anything would change, so the ORM's load of every bot and entry is skipped then."""
    if not entries_in_sync(s, season):
        _sync_all(s, season)


def _may_enter(build_ok: bool | None, ladder: bool, entered: bool) -> bool:
    """Whether a version may hold its bot's entry (the newest such one does, unless the bot is retired
    or suspended): built, and on the ladder or already entered by an organiser (`add_version`)."""
    return bool(build_ok) and (ladder or entered)


def _sync_all(s: Session, season: Season) -> None:
    """`sync_entries` on the ORM objects: every bot, its versions and the season's entries."""
    entries = {e.version_id: e for e in s.scalars(select(Entry).where(Entry.season_id == season.id))}
    starts: dict[int, float] | None = None
    for bot in s.scalars(select(Bot).order_by(Bot.id)):
        built = [v for v in bot.versions if _may_enter(v.build_ok, v.ladder, v.id in entries)]
        latest = built[-1] if built and not bot.retired and not bot.suspended else None
        for v in bot.versions:
            entry = entries.get(v.id)
            if entry is None and v is latest:
                if starts is None:
                    starts = _start_ratings(s, season, list(entries.values()))
                start = _start_for(bot, entries, starts)
                entry = Entry(season_id=season.id, version_id=v.id, rating=start, start_rating=start)
                s.add(entry)
                entries[v.id] = entry
            elif entry is not None:
                entry.active = v is latest
    s.flush()


def entries_in_sync(s: Session, season: Season) -> bool:
    """True when `sync_entries` would change nothing: every bot's newest playable version has an
    active entry and no other entry is active. The same rule (`_may_enter`, and neither retired nor
    suspended) asked in one SQL query that answers yes or no, so the answer is exact, with no cache
    to go stale (a bot registered, built, retired or suspended since is seen at once), and no row of
    the registry reaches Python."""
    return not s.scalar(select(exists(_out_of_sync(season))))


def registry_rev() -> ScalarSelect[int]:
    """SQL: the registry's count of changes (`RegistryRev`), to read beside other figures; NULL if
    its row is missing (then every pairing checks the registry)."""
    return select(RegistryRev.rev).where(RegistryRev.id == 1).scalar_subquery()


def _out_of_sync(season: Season) -> Select[tuple[int]]:
    """The versions whose entry `sync_entries` would change (create, activate or deactivate)."""
    v, b, e = BotVersion.__table__, Bot.__table__, Entry.__table__
    versions = v.join(b, b.c.id == v.c.bot_id).outerjoin(
        e, and_(e.c.version_id == v.c.id, e.c.season_id == season.id)
    )
    newest = (  # each playable bot's newest version that may enter
        select(v.c.bot_id, func.max(v.c.number).label("number"))
        .select_from(versions)
        .where(
            v.c.build_ok.is_(True),
            or_(v.c.ladder.is_(True), e.c.id.is_not(None)),
            b.c.retired.is_not(True),
            b.c.suspended.is_not(True),
        )
        .group_by(v.c.bot_id)
        .subquery("newest")
    )
    wanted = newest.c.bot_id.is_not(None)
    return (
        select(v.c.id)
        .select_from(
            versions.outerjoin(newest, and_(newest.c.bot_id == v.c.bot_id, newest.c.number == v.c.number))
        )
        .where(
            or_(
                and_(wanted, or_(e.c.id.is_(None), e.c.active.is_not(True))),
                and_(~wanted, e.c.active.is_(True)),
            )
        )
    )


def _start_ratings(s: Session, season: Season, entries: list[Entry]) -> dict[int, float]:
    """Entry id -> its season-fit rating (rated entries only), and -1 -> the pool's mean live Elo."""
    from arena.ladder.ratings import INITIAL, FitError
    from arena.ladder.standings import season_fit

    active = [e.rating for e in entries if e.active]
    out = {-1: sum(active) / len(active) if active else INITIAL}
    if any(e.rated for e in entries):
        try:
            fitted, fit = season_fit(s, season)
        except FitError as exc:
            log.warning(
                "season %s: no fit for new entries' start (%s); they start at the mean", season.name, exc
            )
            return out
        out.update({e.id: float(fit.ratings[i]) for i, e in enumerate(fitted) if fit.rated[i]})
    return out


def _start_for(bot: Bot, entries: dict[int, Entry], starts: dict[int, float]) -> float:
    previous = [entries[v.id] for v in bot.versions if v.id in entries and entries[v.id].id in starts]
    return starts[previous[-1].id] if previous else starts[-1]
