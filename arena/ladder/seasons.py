"""Seasons: create, start, schedule matches by matchmaking, freeze, and close with a final round robin.

A season's life: draft -> running -> (closing) -> frozen. While running, `schedule` turns the
matchmaking's pairings into queued matches (two with the same seed and seats swapped when the season
plays duplicate). `close` queues a final duplicate round robin among the active bots; once those are
recorded the season freezes and its standings are stored.

Every pairing's seed is drawn from the operating system's CSPRNG and stored with its matches: no
deck can be derived from anything else (the season seed drives only the matchmaking's draws). Each
match also gets its own salt and the public deck commitment (docs/shuffle.md), written when it is
queued.
"""

from __future__ import annotations

import logging
import math
import random
import secrets
from collections import Counter
from itertools import combinations

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from arena.engine.rng import GOLDEN, MASK64, mix64
from arena.ladder.matchmaking import Candidate, pick_pairing
from arena.ladder.pairing_fit import pairing_ratings
from arena.store import Store, StoreError
from arena.store.decks import commit_decks, new_seed
from arena.store.models import Bot, BotVersion, Entry, Match, Season, utcnow
from arena.store.repo import BadName, check_name

log = logging.getLogger(__name__)
MASK63 = (1 << 63) - 1
PAIR_SAME_OWNER_DEFAULT = False  # bots of one owner do not meet unless the season allows it
STATUSES = ("draft", "running", "closing", "frozen")
OPEN = ("queued", "running")  # match states still to be played ("done" and "failed" are final)


class SeasonError(StoreError):
    """A season command that does not fit the season's state; the message says what to do."""


def derive_seed(season_seed: int, index: int) -> int:
    """A 63-bit value mixed from a seed and an index (SplitMix64 finaliser; fits a signed BIGINT).

    Used for the matchmaking's random draws and a user-seeded `arena compare`, never for a season's
    match seeds (those are `new_seed()`)."""
    return mix64((season_seed + (index + 1) * GOLDEN) & MASK64) & MASK63


def season_options(season: Season) -> dict:
    """The season's options with their defaults: anchors (bot NAME or NAME@V -> fixed Elo) and
    pair_same_owner (may two bots of one owner meet? default no)."""
    return {"anchors": {}, "pair_same_owner": PAIR_SAME_OWNER_DEFAULT, **(season.options or {})}


def create_season(
    store: Store,
    name: str,
    *,
    rules: list[str] | None = None,
    time_control: dict | None = None,
    duplicate: bool = False,
    seed: int | None = None,
    anchors: dict[str, float] | None = None,
    pair_same_owner: bool = PAIR_SAME_OWNER_DEFAULT,
) -> Season:
    """A new draft season. `rules` are "key=value" pairs for the engine's Rules (format included).

    `seed` (default: random, kept private) fixes the matchmaking's random draws only; the match seeds
    are drawn per pairing from the CSPRNG whatever it is. `anchors` fix bots' fitted ratings (so
    standings compare across seasons); `pair_same_owner` lets one owner's bots meet."""
    for bot, elo in (anchors or {}).items():
        if not bot or not math.isfinite(elo):
            raise SeasonError(f"anchor {bot}={elo}: give NAME=ELO with a finite rating, e.g. random=1000")
    try:
        check_name(name, "season name")
    except BadName as exc:
        raise SeasonError(str(exc)) from None
    with store.tx() as s:
        if s.scalar(select(Season).where(Season.name == name)) is not None:
            raise SeasonError(
                f"season {name!r} already exists; pick another name or `arena season start {name}`"
            )
        season = Season(
            name=name,
            rules=list(rules or []),
            time_control=dict(time_control or {}),
            duplicate=duplicate,
            seed=secrets.randbits(63) if seed is None else seed & MASK63,
            options={"anchors": dict(anchors or {}), "pair_same_owner": bool(pair_same_owner)},
        )
        s.add(season)
        s.flush()
        return season


def _season(s: Session, name: str, *, lock: bool = False) -> Season:
    query = select(Season).where(Season.name == name)
    if lock:
        query = query.with_for_update()
    season = s.scalar(query)
    if season is None:
        raise SeasonError(f"no season named {name!r}; create it with `arena season create {name}`")
    return season


def start_season(store: Store, name: str) -> Season:
    """draft -> running, entering the newest built version of every active bot."""
    with store.tx() as s:
        season = _season(s, name, lock=True)
        if season.status == "running":
            return season
        if season.status != "draft":
            raise SeasonError(f"season {name!r} is {season.status}; only a draft season can start")
        season.status, season.started_at = "running", utcnow()
        sync_entries(s, season)
        return season


def freeze_season(store: Store, name: str) -> Season:
    """Stop all play and store the standings as they are now."""
    from arena.ladder.standings import compute_standings

    with store.tx() as s:
        season = _season(s, name, lock=True)
        if season.status == "frozen":
            return season
        for m in s.scalars(select(Match).where(Match.season_id == season.id, Match.status == "queued")):
            s.delete(m)  # never started: nothing to keep
        season.status, season.frozen_at = "frozen", utcnow()
        s.flush()
        season.standings = [row.to_dict() for row in compute_standings(s, season)]
        return season


def close_season(store: Store, name: str) -> int:
    """Queue the final duplicate round robin among active bots (once); returns how many finals are pending."""
    with store.tx() as s:
        season = _season(s, name, lock=True)
        if season.status == "frozen":
            raise SeasonError(f"season {name!r} is already frozen")
        if season.status == "draft":
            raise SeasonError(f"season {name!r} never started; `arena season start {name}` first")
        if season.status == "running":
            sync_entries(s, season)
            for m in s.scalars(
                select(Match).where(
                    Match.season_id == season.id, Match.status == "queued", Match.kind == "ladder"
                )
            ):
                s.delete(m)
            entries = list(
                s.scalars(
                    select(Entry)
                    .where(Entry.season_id == season.id, Entry.active.is_(True))
                    .order_by(Entry.id)
                )
            )
            same_owner = bool(season_options(season)["pair_same_owner"])
            for a, b in combinations(entries, 2):
                if a.version.bot.owner == b.version.bot.owner and not same_owner:
                    continue
                _queue_pair(s, season, a, b, kind="final", duplicate=True)
            season.status = "closing"
        return pending(s, season.id, kinds=("final",))


def pending(s: Session, season_id: int, kinds: tuple[str, ...] = ("ladder", "final")) -> int:
    """Matches of the season not yet recorded (queued or running)."""
    return (
        s.scalar(
            select(func.count())
            .select_from(Match)
            .where(Match.season_id == season_id, Match.status.in_(OPEN), Match.kind.in_(kinds))
        )
        or 0
    )


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
    active entry and no other entry is active. The same rule, on plain rows of one query (versions,
    their bot's flags and their entry in this season), so the answer is exact, with no cache to go
    stale: a bot registered, built, retired or suspended since is seen at once."""
    rows = s.execute(
        select(
            BotVersion.id,
            BotVersion.bot_id,
            BotVersion.build_ok,
            BotVersion.ladder,
            Bot.retired,
            Bot.suspended,
            Entry.active,
        )
        .join(Bot, BotVersion.bot_id == Bot.id)
        .outerjoin(Entry, and_(Entry.version_id == BotVersion.id, Entry.season_id == season.id))
        .order_by(Bot.id, BotVersion.number)
    ).all()
    latest: dict[int, int] = {}  # bot id -> its newest playable version (rows go oldest first)
    for vid, bot_id, build_ok, ladder, retired, suspended, active in rows:
        if _may_enter(build_ok, ladder, active is not None) and not retired and not suspended:
            latest[bot_id] = vid
    for vid, bot_id, _, _, _, _, active in rows:
        wanted = latest.get(bot_id) == vid
        if (active is None and wanted) or (active is not None and bool(active) != wanted):
            return False
    return True


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


def add_version(store: Store, name: str, version_id: int) -> None:
    """An organiser enters a version (one `arena compare` registered) in season NAME's ladder."""
    with store.tx() as s:
        season = _season(s, name, lock=True)
        v = s.get_one(BotVersion, version_id)
        if not v.build_ok:
            raise SeasonError(f"{v.label} failed to build; it cannot enter a season")
        v.ladder = True
        if season.status == "running":
            sync_entries(s, season)


def _queue_pair(
    s: Session, season: Season, a: Entry, b: Entry, *, kind: str, duplicate: bool, swap: bool = False
) -> list[Match]:
    index = season.scheduled
    seed = new_seed()  # both twins of a duplicate pair hold the same decks
    seats = [(b, a), (a, b)] if swap else [(a, b), (b, a)]
    out = []
    for x, y in seats[: 2 if duplicate else 1]:
        m = Match(
            season_id=season.id,
            kind=kind,
            pair=index,
            version0_id=x.version_id,
            version1_id=y.version_id,
            entry0_id=x.id,
            entry1_id=y.id,
            rules=list(season.rules),
            time_control=dict(season.time_control),
            seed=seed,
        )
        s.add(m)
        commit_decks(s, m)
        out.append(m)
    a.last_scheduled = b.last_scheduled = index
    season.scheduled = index + 1  # flushed with the claim that follows (one UPDATE of the match, not two)
    return out


def schedule(s: Session, season: Season, pairings: int = 1) -> list[Match]:
    """Queue up to `pairings` new ladder pairings chosen by matchmaking (fewer if no two bots may meet)."""
    if season.status != "running":
        return []
    sync_entries(s, season)
    entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id, Entry.active.is_(True))))
    by_id = {e.id: e for e in entries}
    busy: Counter[int | None] = Counter()
    failed: Counter[int | None] = Counter()
    for status, *seats in s.execute(
        select(Match.status, Match.entry0_id, Match.entry1_id).where(
            Match.season_id == season.id, Match.status.in_((*OPEN, "failed"))
        )
    ).all():
        (failed if status == "failed" else busy).update(seats)
    # matches so far = recorded (the entry's own counters) + open + failed, without scanning all history;
    # failed ones count so that a bot whose matches keep breaking is not "new" forever
    rating = pairing_ratings(s, season, entries)
    same_owner = bool(season_options(season)["pair_same_owner"])
    cands = {
        e.id: Candidate(
            e.id,
            e.version.bot.owner,
            rating[e.id],
            e.wins + e.draws + e.losses + e.voids + busy[e.id] + failed[e.id],
            e.last_scheduled,
            e.id in busy,
        )
        for e in entries
    }
    created: list[Match] = []
    for _ in range(pairings):
        rng = random.Random(derive_seed(season.seed ^ 0x5EED, season.scheduled))
        pick = pick_pairing(list(cands.values()), rng, same_owner=same_owner)
        if pick is None:
            break
        first, second = pick
        swap = rng.random() < 0.5
        created += _queue_pair(
            s,
            season,
            by_id[first.entry_id],
            by_id[second.entry_id],
            kind="ladder",
            duplicate=season.duplicate,
            swap=swap,
        )
        for c in (first, second):
            cands[c.entry_id] = Candidate(
                c.entry_id, c.owner, c.rating, c.games + 1, season.scheduled - 1, True
            )
    return created


def no_pairing_reason(s: Session, season: Season) -> str:
    """Why matchmaking finds no pairing in a running season, for the organiser."""
    entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id, Entry.active.is_(True))))
    owners = Counter(e.version.bot.owner for e in entries)
    if len(entries) < 2:
        return (
            f"season {season.name} has {len(entries)} active bot{'s' * (len(entries) != 1)}; a match needs two "
            "(submit bots with `arena bots submit`; retired, suspended and unbuilt bots do not play)"
        )
    if len(owners) == 1 and not season_options(season)["pair_same_owner"]:
        (owner,) = owners
        return (
            f"season {season.name}: all {len(entries)} active bots belong to owner {owner!r}, and bots of "
            f"one owner do not meet in this season (create it with --pair-same-owner to allow it)"
        )
    return f"season {season.name}: matchmaking found no pairing among {len(entries)} active bots"


def maybe_finish_close(store: Store, name: str) -> bool:
    """Freeze a closing season once all its final matches are recorded; True if it is now frozen."""
    with store.tx() as s:
        season = _season(s, name)
        if season.status == "frozen":
            return True
        if season.status != "closing" or pending(s, season.id, kinds=("final",)):
            return False
    freeze_season(store, name)
    return True
