"""The organiser's log: every control (pause, requeue, void, recompute, suspend, drain, ...) is
written here with who did it, what, to what and when, in the transaction of the action itself, and
logged on `arena.admin`. Admin-only (docs/security.md): it may name owners and workers."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from sqlalchemy import select
from sqlalchemy.orm import Session

from arena.store.models import AdminAction, utcnow

log = logging.getLogger("arena.admin")
ACTOR_MOST = 200
TARGET_MOST = 200
ACTIONS_PAGE = 200


class Action(StrEnum):
    """The organiser's controls, as the log names them."""

    PAUSE = "pause"
    RESUME = "resume"
    REQUEUE = "requeue"
    VOID = "void"
    RECOMPUTE = "recompute"
    SUSPEND_OWNER = "suspend-owner"
    REINSTATE_OWNER = "reinstate-owner"
    DRAIN = "drain"
    UNDRAIN = "undrain"


@dataclass(frozen=True)
class Logged:
    id: int
    at: datetime
    actor: str
    action: str
    target: str
    detail: str

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "at": self.at.isoformat(timespec="seconds") + "Z",
            "actor": self.actor,
            "action": self.action,
            "target": self.target,
            "detail": self.detail,
        }


def record_action(s: Session, actor: str, action: Action, target: str, detail: str = "") -> None:
    """Write one action in the caller's transaction, and log it (the line carries no secret: the
    actor is a transport and an address, or a local user)."""
    s.add(
        AdminAction(
            at=utcnow(),
            actor=actor[:ACTOR_MOST],
            action=action.value,
            target=target[:TARGET_MOST],
            detail=detail,
        )
    )
    log.info("organiser action %s on %s by %s: %s", action.value, target, actor, detail or "-")


def recent_actions(s: Session, limit: int = ACTIONS_PAGE) -> list[Logged]:
    """The newest actions first, at most `limit` (at most ACTIONS_PAGE)."""
    rows = s.scalars(
        select(AdminAction).order_by(AdminAction.id.desc()).limit(min(limit or ACTIONS_PAGE, ACTIONS_PAGE))
    )
    return [Logged(r.id, r.at, r.actor, r.action, r.target, r.detail) for r in rows]


def local_actor() -> str:
    """Who runs a local `arena` command: the user of this process, on this host."""
    import getpass
    import socket

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"cli:{user}@{socket.gethostname()}"
