"""The match queue with leases: a claimed match belongs to one runner until its lease ends.

A runner renews its leases while it plays. If it dies, its matches go back to the queue, either
when the lease expires or at once when a runner on the same host sees the owner's pid is gone.
Recording requires holding the lease, so a match is never recorded twice.

Matches that share decks (the same seed: the twins of a duplicate pair, or the same season and
pair) never run at once: `claim` passes over a queued match while one of its deck-mates is running,
so colluding copies of a bot can never pass the cards of one match to the other (docs/ladder.md).
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    CursorResult,
    Executable,
    Integer,
    Select,
    and_,
    bindparam,
    cast,
    exists,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import InstrumentedAttribute, set_committed_value

from arena.store.decks import MATE, mates_of, redeal
from arena.store.models import Match, utcnow

LEASE_SECONDS = 60.0
DECK_LOCK_SPACE = 0x5EED  # first key of the PostgreSQL advisory locks that serialise claims per seed
MAX_PASSED = 32  # queued candidates one claim may pass over (contended on PostgreSQL) before giving up


def lease_owner() -> str:
    """A unique name for this runner: host, pid and a random token."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def requeue_abandoned(s: Session, *, now: float | None = None) -> int:
    """Put back matches whose lease expired or whose runner on this host is dead; return how many."""
    now = time.time() if now is None else now
    host = socket.gethostname()
    count = 0
    for m in s.scalars(select(Match).where(Match.status == "running").with_for_update()):
        owner_host, _, rest = (m.lease_owner or "").partition(":")
        pid = rest.partition(":")[0]
        dead = owner_host == host and pid.isdigit() and int(pid) != os.getpid() and not _pid_alive(int(pid))
        if dead or (m.lease_expires or 0) < now:
            _back_to_queue(s, m)
            count += 1
    return count


def _back_to_queue(s: Session, m: Match) -> None:
    """A started match is queued again, with new decks where its deck-mates allow (`redeal`)."""
    m.status, m.lease_owner, m.lease_expires, m.started_at = "queued", None, None, None
    redeal(s, m)


def _not_beside_running(s: Session) -> list[ColumnElement[bool]]:
    """Conditions that keep out every queued match with a running deck-mate. The running matches are
    few (one per worker), so they are read first and the queue is filtered by plain value lists: a
    correlated subquery per queued row would make each claim scan the table once per candidate."""
    running = s.execute(
        select(Match.seed, Match.season_id, Match.pair).where(Match.status == "running")
    ).all()
    seeds = sorted({seed for seed, _, _ in running})
    pairs: dict[int, set[int]] = {}
    for _, season, pair in running:
        if season is not None and pair is not None:
            pairs.setdefault(season, set()).add(pair)
    conditions: list[ColumnElement[bool]] = []
    if seeds:
        conditions.append(Match.seed.not_in(seeds))
    for season, taken in sorted(pairs.items()):  # one season per clause: SQLite's row-value IN is slow
        conditions.append(  # NULL season or pair: no pair to share (NOT over a NULL would drop the row)
            or_(
                Match.season_id.is_(None),
                Match.pair.is_(None),
                Match.season_id != season,
                Match.pair.not_in(sorted(taken)),
            )
        )
    return conditions


def deck_key(seed: ColumnElement[int] | InstrumentedAttribute[int]) -> ColumnElement[int]:
    """SQL: the seed folded to a signed 32-bit advisory-lock key, `(seed ^ (seed >> 32)) & 0xFFFFFFFF`
    taken as signed (a collision only makes a claim pass a match over for now). PostgreSQL's `#` is
    XOR."""

    def n(value: int) -> ColumnElement[int]:  # a constant written into the SQL (a shift takes an INTEGER)
        return literal_column(str(value), Integer)

    key = seed.op("#")(seed.op(">>")(n(32))).op("&")(n(0xFFFFFFFF))
    return cast(key - key.op(">>")(n(31)).op("<<")(n(32)), Integer)


#: PostgreSQL: the picked match's seed lock, taken without waiting in the pick itself (False: another
#: claimer holds it). The planner computes it below the row locks, for each candidate that passes
#: the filters, so a candidate skipped as row-locked may keep a seed lock until the commit: another
#: claimer then only passes its twin over, as it would while that twin is being claimed.
_DECKS_LOCKED = func.pg_try_advisory_xact_lock(DECK_LOCK_SPACE, deck_key(Match.seed))


def _no_running_mate() -> ColumnElement[bool]:
    """SQL, correlated with the queued `Match`: no running match shares its decks. The running
    matches are few (one per worker) and found by their status's index, so each candidate costs a
    probe of them, and the claim's walk in id order stops at the first that passes."""
    same_pair = and_(MATE.season_id == Match.season_id, MATE.pair == Match.pair)
    return ~exists().where(MATE.status == "running", or_(MATE.seed == Match.seed, same_pair))


def _take_alone(s: Session, owner: str, m: Match, ttl: float) -> bool:
    """PostgreSQL, under the seed's lock: lease `m` in one UPDATE unless a deck-mate is running now.
    The UPDATE's own snapshot is taken after the lock was granted, so it sees a twin that a claimer
    holding the lock before us committed as running; False (nothing changed) when there is one."""
    now, expires = utcnow(), time.time() + ttl
    pair = m.season_id is not None and m.pair is not None
    values = {"t_id": m.id, "t_seed": m.seed, "t_season": m.season_id, "t_pair": m.pair, "t_owner": owner,
              "t_expires": expires, "t_now": now}  # fmt: skip
    attempts = s.scalar(_lease_alone(pair), values)
    if attempts is None:
        return False
    for name, value in (("status", "running"), ("lease_owner", owner), ("lease_expires", expires),
                        ("started_at", now), ("attempts", attempts)):  # fmt: skip
        set_committed_value(m, name, value)
    return True


def claim(
    s: Session,
    owner: str,
    *,
    season_id: int | None = None,
    kinds: tuple[str, ...] | None = None,
    ttl: float = LEASE_SECONDS,
    ids: list[int] | None = None,
) -> Match | None:
    """Take the oldest queued match (optionally of one season, of some kinds, or among `ids`) under a
    lease, passing over any whose deck-mate is running; None when nothing may start now.

    SQLite runs one writer at a time (BEGIN IMMEDIATE), so the check and the claim cannot interleave
    with another claimer's. PostgreSQL claimers run side by side: rows are taken with SKIP LOCKED,
    the running deck-mates kept out in the same query (`_no_running_mate`), and each pick is leased
    under its seed's advisory lock, taken by the pick itself (`_DECKS_LOCKED`), by an UPDATE that
    looks again for a running deck-mate (`_take_alone`): two statements. The UPDATE must be a
    statement of its own: its snapshot, taken after the lock was granted, is what sees a twin that
    the lock's previous holder committed as running.
    """
    if s.get_bind().dialect.name != "postgresql":
        query = select(Match).where(Match.status == "queued", *_not_beside_running(s))
        if ids is not None:
            query = query.where(Match.id.in_(ids))
        if season_id is not None:
            query = query.where(Match.season_id == season_id)
        if kinds:
            query = query.where(Match.kind.in_(kinds))
        m = s.scalar(query.order_by(Match.id).limit(1))
        return None if m is None else take(s, owner, m, ttl=ttl)
    passed: list[int] = []
    values = {"c_ids": ids, "c_season": season_id, "c_kinds": list(kinds or ()), "c_passed": passed}
    for _ in range(MAX_PASSED):
        pick = _pg_pick(ids is not None, season_id is not None, bool(kinds), bool(passed))
        row = s.execute(pick, values).first()
        if row is None:
            return None
        m, locked = row
        if locked and _take_alone(s, owner, m, ttl):
            return m
        passed.append(m.id)  # a twin is being claimed or played right now: try the next one
    return None


@cache
def _lease_alone(pair: bool) -> Executable:
    """`_take_alone`'s UPDATE for a match with or without a season's pair (bound by name), built once."""
    pairing: tuple[Any, Any] | None = (bindparam("t_season"), bindparam("t_pair")) if pair else None
    mates = mates_of(bindparam("t_id"), bindparam("t_seed"), pairing)
    return (
        update(Match)
        .where(Match.id == bindparam("t_id"), Match.status == "queued", ~exists().where(MATE.status == "running", mates))
        .values(status="running", lease_owner=bindparam("t_owner"), lease_expires=bindparam("t_expires"),
                started_at=bindparam("t_now"), attempts=Match.attempts + 1)
        .returning(Match.attempts)
        .execution_options(synchronize_session=False)
    )  # fmt: skip


@cache
def _pg_pick(ids: bool, season: bool, kinds: bool, passed: bool) -> Select[Match, bool]:
    """PostgreSQL: `claim`'s pick with its seed's lock, for the filters given (bound by name), built
    once per process: building it cost more than running it."""
    query = select(Match, _DECKS_LOCKED).where(Match.status == "queued", _no_running_mate())
    if ids:
        query = query.where(Match.id.in_(bindparam("c_ids", expanding=True)))
    if season:
        query = query.where(Match.season_id == bindparam("c_season"))
    if kinds:
        query = query.where(Match.kind.in_(bindparam("c_kinds", expanding=True)))
    if passed:
        query = query.where(Match.id.not_in(bindparam("c_passed", expanding=True)))
    return query.order_by(Match.id).limit(1).with_for_update(skip_locked=True, of=Match)


def take(s: Session, owner: str, m: Match, *, ttl: float = LEASE_SECONDS) -> Match:
    """Lease `m`, a queued match `claim` picked or one this very transaction queued: a new pairing's
    seed and pair are its own, so no deck-mate of it can be running, and no other runner can see it
    before the commit. Taking it so spares the queue queries a second `claim` would make."""
    assert m.status == "queued", f"match {m.id} is {m.status}, not queued"
    m.status, m.lease_owner, m.lease_expires = "running", owner, time.time() + ttl
    m.started_at = utcnow()
    m.attempts += 1
    s.flush()
    return m


def renew(s: Session, owner: str, match_ids: list[int], *, ttl: float = LEASE_SECONDS) -> int:
    """Extend this runner's leases; returns how many it still holds."""
    if not match_ids:
        return 0
    result = s.execute(
        update(Match)
        .where(Match.id.in_(match_ids), Match.status == "running", Match.lease_owner == owner)
        .values(lease_expires=time.time() + ttl)
    )
    assert isinstance(result, CursorResult)  # an UPDATE's result (Session.execute is typed as any Result)
    return result.rowcount


def release(s: Session, owner: str, match_id: int) -> None:
    """Give a claimed match back to the queue (e.g. on Ctrl-C), with new decks where it may."""
    m = lock_for_record(s, owner, match_id)
    if m is not None:
        _back_to_queue(s, m)


#: SQL: the match `lease_match`, row-locked, if `lease_holder` still holds its lease (built once).
LEASE_HELD = (
    select(Match)
    .where(Match.id == bindparam("lease_match"), Match.status == "running", Match.lease_owner == bindparam("lease_holder"))
    .with_for_update(of=Match)
)  # fmt: skip


def lock_for_record(s: Session, owner: str, match_id: int) -> Match | None:
    """The match, row-locked, if this runner still holds its lease; else None (someone else has it)."""
    return s.scalar(LEASE_HELD, {"lease_match": match_id, "lease_holder": owner})
