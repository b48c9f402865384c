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
from functools import cache
from itertools import combinations
from typing import Any, cast

from sqlalchemy import Integer, Select, Table, bindparam, func, select, true, update
from sqlalchemy.orm import Session

from arena.engine.rng import GOLDEN, MASK64, mix64
from arena.ladder.matchmaking import SPREAD
from arena.ladder.pairing_fit import fit_state, fit_state_query, refresh_pairing_fit
from arena.ladder.pairing_pick import Seat, pick_in_sql, pick_query, seats
from arena.ladder.season_entries import _sync_all, entries_in_sync, registry_rev, sync_entries
from arena.store import Store, StoreError
from arena.store.decks import commit_decks, new_seed
from arena.store.models import BotVersion, Entry, Match, Season, utcnow
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
                _queue_pair(
                    s,
                    season,
                    Seat(a.id, a.version_id),
                    Seat(b.id, b.version_id),
                    kind="final",
                    duplicate=True,
                )
                a.last_scheduled = b.last_scheduled = season.scheduled - 1
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


def _first_pick(s: Session, season: Season, offset: float, same_owner: bool) -> tuple[Seat, Seat] | None:
    """A pairing's first pick, read in one query with what must be done before it: the registry's
    count of changes and the pairing fit's state. The pick is taken as it is unless the entries must
    be synced (the count moved since the season was last found in sync and `entries_in_sync` says
    no) or the pairing fit refreshed (`refresh_pairing_fit`): then it is made again after. The count
    is read before the registry is, so a change committed meanwhile leaves it moved for the next."""
    query = _first_pick_query(s.get_bind().dialect.name, same_owner)
    row = s.execute(query, {"season_id": season.id, "offset": offset}).one()
    rev, counts, picked = row[0], list(row[1:4]), row[4:]
    stale = False
    if rev is None or rev != season.synced_rev:
        if not entries_in_sync(s, season):
            _sync_all(s, season)  # its own changes move the count: the next pairing checks once more
            counts, stale = list(s.execute(fit_state_query(season)).one()), True
        season.synced_rev = rev  # written with the pairing's own update of the season row
    if refresh_pairing_fit(s, season, fit_state(season, counts)):
        stale = True
    return pick_in_sql(s, season.id, offset, same_owner=same_owner) if stale else seats(picked)


@cache
def _first_pick_query(dialect: str, same_owner: bool) -> Select[Any]:
    """`_first_pick`'s query, its `season_id` and `offset` bound at execution; built once a process
    (built per pairing, its Python cost doubled the pairing's time outside SQL)."""
    season_id = bindparam("season_id", type_=Integer())
    state = select(registry_rev(), *fit_state_query(season_id).subquery().c).subquery("state")
    pick = pick_query(dialect, same_owner).subquery("pick")
    return select(*state.c, *pick.c).select_from(state.outerjoin(pick, true()))


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
    s: Session, season: Season, a: Seat, b: Seat, *, kind: str, duplicate: bool, swap: bool = False
) -> list[Match]:
    """Queue the match of `a` and `b` (twins with seats swapped when `duplicate`) with one new seed,
    and advance the season's schedule index; the caller marks the entries' `last_scheduled`."""
    index = season.scheduled
    seed = new_seed()  # both twins of a duplicate pair hold the same decks
    seats = [(b, a), (a, b)] if swap else [(a, b), (b, a)]
    out = [
        Match(
            season_id=season.id,
            kind=kind,
            pair=index,
            version0_id=x.version_id,
            version1_id=y.version_id,
            entry0_id=x.entry_id,
            entry1_id=y.entry_id,
            rules=list(season.rules),
            time_control=dict(season.time_control),
            seed=seed,
        )
        for x, y in seats[: 2 if duplicate else 1]
    ]
    s.add_all(out)
    s.flush()  # both twins in one INSERT: their ids go into the commitments
    for m in out:
        commit_decks(s, m)
    season.scheduled = index + 1  # flushed with the claim that follows (one UPDATE of the match, not two)
    return out


def schedule(s: Session, season: Season, pairings: int = 1) -> list[Match]:
    """Queue up to `pairings` new ladder pairings chosen by matchmaking (fewer if no two bots may meet).

    Each pairing is `pick_pairing`'s rule run in SQL (`pick_in_sql`): two rows come back, whatever
    the number of entries and matches. The pairing ratings are refitted first when due."""
    if season.status != "running":
        return []
    same_owner = bool(season_options(season)["pair_same_owner"])
    created: list[Match] = []
    for i in range(pairings):
        rng = random.Random(derive_seed(season.seed ^ 0x5EED, season.scheduled))
        offset = rng.gauss(0.0, SPREAD)  # `pick_pairing`'s draw: the first's rating + offset is the target
        if i == 0:  # with the registry's count and the fit's state: the refit, when due, comes first
            pick = _first_pick(s, season, offset, same_owner)
        else:
            pick = pick_in_sql(s, season.id, offset, same_owner=same_owner)
        if pick is None:
            break
        first, second = pick
        swap = rng.random() < 0.5
        created += _queue_pair(s, season, first, second, kind="ladder", duplicate=season.duplicate, swap=swap)
        table = cast(Table, Entry.__table__)  # the next pick reads it: flushed now, one statement for both
        s.execute(
            update(table)
            .where(table.c.id.in_((first.entry_id, second.entry_id)))
            .values(last_scheduled=season.scheduled - 1)
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
