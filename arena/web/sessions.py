"""Web sessions: a log-in with an owner's (or the admin's) token, kept server-side behind a random id.

The cookie carries only a random session id (`elfern_session`, HttpOnly, SameSite=Strict, Secure
when the request came over https). The server maps it to the principal, the SHA-256 of the token
used (never the token itself), a CSRF token for the session's forms and an expiry (12 h). Every use
checks that the owner's token is still the one logged in with: a rotated or revoked token ends its
sessions on their next request. Sessions live in the web process's memory (a restart logs everyone
out), or with shared state in Redis (`SharedSessions`: every replica knows every session; a log-out
on one ends it on all).
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request, Response
from sqlalchemy import select

from arena.access.owners import token_hash
from arena.access.roles import Principal
from arena.access.shared_state import SharedState, digest
from arena.store import Store
from arena.store import models as m

COOKIE = "elfern_session"
LIFETIME = 12 * 3600.0  # seconds a session lasts after log-in
MAX_SESSIONS = 10_000  # the oldest go first past this (log-ins are rate limited per address too)


@dataclass
class WebSession:
    id: str
    principal: Principal
    digest: str  # SHA-256 of the token logged in with: to notice a rotation or revocation
    csrf: str  # the synchroniser token every form of this session carries
    expires: float
    shown: str  # the token's first characters, for the page header


class Sessions:
    """Thread-safe in-memory sessions; `clock` is injectable so that tests can expire one without sleeping."""

    def __init__(self, lifetime: float = LIFETIME, clock: Callable[[], float] = time.monotonic) -> None:
        self.lifetime = lifetime
        self._clock = clock
        self._lock = threading.Lock()
        self._by_id: dict[str, WebSession] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def create(self, principal: Principal, token: str, shown: str) -> WebSession:
        sid = secrets.token_urlsafe(32)
        now = self._clock()
        made = WebSession(
            sid, principal, token_hash(token), secrets.token_urlsafe(32), now + self.lifetime, shown
        )
        with self._lock:
            self._by_id[_key(sid)] = made
            if len(self._by_id) > MAX_SESSIONS:
                self._prune(now)
        return made

    def get(self, sid: str | None) -> WebSession | None:
        """The live session of this id, else None (an expired one is forgotten)."""
        if not sid or len(sid) > 100:
            return None
        with self._lock:
            found = self._by_id.get(_key(sid))
            if found is not None and found.expires <= self._clock():
                del self._by_id[_key(sid)]
                return None
            return found

    def delete(self, sid: str | None) -> None:
        if sid:
            with self._lock:
                self._by_id.pop(_key(sid), None)

    def end_owner(self, owner: str) -> int:
        """End every session of `owner` (its token was rotated or revoked); how many ended."""
        with self._lock:
            gone = [k for k, v in self._by_id.items() if v.principal.owner == owner]
            for k in gone:
                del self._by_id[k]
            return len(gone)

    def _prune(self, now: float) -> None:
        for k in [k for k, v in self._by_id.items() if v.expires <= now]:
            del self._by_id[k]
        while len(self._by_id) > MAX_SESSIONS:
            oldest = min(self._by_id, key=lambda k: self._by_id[k].expires)
            del self._by_id[oldest]


class SharedSessions(Sessions):
    """Sessions in the replicas' Redis: a key per session (`<prefix>session:<sha256 of its id>`)
    holding its principal, token digest, CSRF token and shown prefix, expiring with the session;
    and per owner a set of its sessions' keys, so that `end_owner` finds them."""

    def __init__(self, state: SharedState, lifetime: float = LIFETIME) -> None:
        super().__init__(lifetime, time.time)  # wall clock: `expires` is shared by processes
        self.state = state

    def _owner_key(self, owner: str | None) -> str:
        return self.state.key("sessions-of", digest(owner or ""))

    def __len__(self) -> int:
        return sum(1 for _ in self.state.client.scan_iter(self.state.key("session", "*"), count=1000))

    def create(self, principal: Principal, token: str, shown: str) -> WebSession:
        sid = secrets.token_urlsafe(32)
        made = WebSession(
            sid, principal, token_hash(token), secrets.token_urlsafe(32), self._clock() + self.lifetime, shown
        )
        row: dict[str, object] = {"role": principal.role, "owner": principal.owner, "digest": made.digest}
        row |= {"csrf": made.csrf, "expires": made.expires, "shown": shown}
        key, ttl = self.state.key("session", _key(sid)), max(1, int(self.lifetime))
        pipe = self.state.client.pipeline()
        pipe.set(key, json.dumps(row), ex=ttl)
        pipe.sadd(self._owner_key(principal.owner), key)
        pipe.expire(self._owner_key(principal.owner), ttl)
        pipe.execute()
        return made

    def get(self, sid: str | None) -> WebSession | None:
        if not sid or len(sid) > 100:
            return None
        raw = self.state.client.get(self.state.key("session", _key(sid)))
        if raw is None:
            return None
        row = json.loads(raw)
        principal = Principal(row["role"], row["owner"])
        return WebSession(sid, principal, row["digest"], row["csrf"], row["expires"], row["shown"])

    def delete(self, sid: str | None) -> None:
        if sid:
            self.state.client.delete(self.state.key("session", _key(sid)))

    def end_owner(self, owner: str) -> int:
        index = self._owner_key(owner)
        keys = list(self.state.client.smembers(index))
        ended = int(self.state.client.delete(*keys)) if keys else 0
        self.state.client.delete(index)
        return ended


def _key(sid: str) -> str:
    """Sessions are filed under a digest of their id, so that the table itself hands out no cookie."""
    return hashlib.sha256(sid.encode()).hexdigest()


def still_valid(store: Store, session: WebSession) -> bool:
    """True while the token the session logged in with still works (owners: not rotated, not revoked)."""
    if session.principal.is_admin:
        return True  # the admin token changes only with a restart, which ends every session
    with store.read() as s:
        owner = s.scalar(
            select(m.Owner).where(
                m.Owner.name == session.principal.owner,
                m.Owner.token_hash == session.digest,
                m.Owner.revoked_at.is_(None),
            )
        )
        return owner is not None


def is_https(request: Request) -> bool:
    """Whether the browser reached us over TLS. Behind a reverse proxy, uvicorn's `--proxy-headers` with
    `--forwarded-allow-ips` set to the proxy's address turns its X-Forwarded-Proto into the request's scheme."""
    return request.url.scheme == "https"


def set_cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="strict",
        secure=is_https(request),
    )


def clear_cookie(response: Response, request: Request, name: str) -> None:
    response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=is_https(request))
