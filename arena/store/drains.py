"""Draining workers: a worker told to drain finishes the matches it holds and claims no new one.

A worker is named as the queue names the holder of a lease (`arena.store.queue.lease_owner`):
`host:pid:token`. A drain names that whole name or its start, a host or `host:pid`, so one drain can
stop every player of a machine before it is taken down. The players of `arena serve` look at the
drains at each refresh (`arena.ladder.server_run`); `undrain` lets them claim again.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from arena.limits import LEASE_OWNER
from arena.store.models import Match, WorkerDrain, utcnow
from arena.store.repo import StoreError


class DrainError(StoreError):
    """A drain that cannot be done; the message says why."""


@dataclass(frozen=True)
class Worker:
    """A worker as the organiser sees it: its name, the matches it holds now, and its drain."""

    name: str
    running: int
    draining: bool
    drained_by: str = ""  # the drain's name (this worker's, or its host's) when draining
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "running": self.running,
            "draining": self.draining,
            "drained_by": self.drained_by,
            "reason": self.reason,
        }


def check_worker(name: str) -> str:
    name = name.strip()
    if not name or len(name) > LEASE_OWNER.most or any(c.isspace() for c in name):
        raise DrainError(
            f"worker {name[:40]!r}: give a host, host:pid or a whole worker name (no spaces, at most "
            f"{LEASE_OWNER.most} characters) as `arena workers list` shows them"
        )
    return name


def covers(drain: str, owner: str) -> bool:
    """Does the drain `drain` name the worker `owner` (all of it, or its host or host:pid)?"""
    return owner == drain or owner.startswith(drain + ":")


def drained_by(s: Session, owner: str) -> WorkerDrain | None:
    """The drain that names `owner`, if any."""
    for drain in s.scalars(select(WorkerDrain).order_by(WorkerDrain.name)):
        if covers(drain.name, owner):
            return drain
    return None


def drain(s: Session, name: str, reason: str) -> bool:
    """Record a drain of `name`; False if it was drained already (the reason is then updated)."""
    name = check_worker(name)
    row = s.get(WorkerDrain, name)
    if row is not None:
        row.reason = reason
        return False
    s.add(WorkerDrain(name=name, reason=reason, requested_at=utcnow()))
    return True


def undrain(s: Session, name: str) -> None:
    row = s.get(WorkerDrain, check_worker(name))
    if row is None:
        raise DrainError(f"worker {name!r} is not drained; `arena workers list` shows the drains")
    s.delete(row)


def workers(s: Session) -> list[Worker]:
    """The workers holding matches now, and every drain (a drained worker that holds nothing is
    listed by its drain's name, with 0 running)."""
    held: dict[str, int] = {
        owner: int(n)
        for owner, n in s.execute(
            select(Match.lease_owner, func.count())
            .where(Match.status == "running", Match.lease_owner.is_not(None))
            .group_by(Match.lease_owner)
        ).all()
        if owner is not None
    }
    drains = list(s.scalars(select(WorkerDrain).order_by(WorkerDrain.name)))
    out: list[Worker] = []
    for owner, n in sorted(held.items()):
        d = next((x for x in drains if covers(x.name, owner)), None)
        out.append(Worker(owner, int(n), d is not None, d.name if d else "", d.reason if d else ""))
    for d in drains:
        if d.name not in held:
            out.append(Worker(d.name, 0, True, d.name, d.reason))
    return out
