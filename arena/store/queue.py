"""The match queue with leases: a claimed match belongs to one runner until its lease ends.

A runner renews its leases while it plays. If it dies, its matches go back to the queue, either
when the lease expires or at once when a runner on the same host sees the owner's pid is gone.
Recording requires holding the lease, so a match is never recorded twice.
"""

from __future__ import annotations

import os
import socket
import time
import uuid

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.store.models import Match

LEASE_SECONDS = 60.0


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
            m.status, m.lease_owner, m.lease_expires = "queued", None, None
            count += 1
    return count


def claim(
    s: Session,
    owner: str,
    *,
    season_id: int | None = None,
    kinds: tuple[str, ...] | None = None,
    ttl: float = LEASE_SECONDS,
    ids: list[int] | None = None,
) -> Match | None:
    """Take the oldest queued match (optionally of one season, of some kinds, or among `ids`) under a lease."""
    query = select(Match).where(Match.status == "queued")
    if ids is not None:
        query = query.where(Match.id.in_(ids))
    if season_id is not None:
        query = query.where(Match.season_id == season_id)
    if kinds:
        query = query.where(Match.kind.in_(kinds))
    query = query.order_by(Match.id).limit(1)
    if s.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    m = s.scalar(query)
    if m is None:
        return None
    m.status, m.lease_owner, m.lease_expires = "running", owner, time.time() + ttl
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
    return result.rowcount


def release(s: Session, owner: str, match_id: int) -> None:
    """Give a claimed match back to the queue (e.g. on Ctrl-C)."""
    s.execute(
        update(Match)
        .where(Match.id == match_id, Match.status == "running", Match.lease_owner == owner)
        .values(status="queued", lease_owner=None, lease_expires=None)
    )


def lock_for_record(s: Session, owner: str, match_id: int) -> Match | None:
    """The match, row-locked, if this runner still holds its lease; else None (someone else has it)."""
    return s.scalar(
        select(Match)
        .where(Match.id == match_id, Match.status == "running", Match.lease_owner == owner)
        .with_for_update(of=Match)
    )
