"""Live events through Redis streams: a worker and a server replica that share no disk.

One stream per match and attempt, `<prefix>m<ID>:a<N>`, each entry one public event (field `e`, the
JSON line the file would hold), and one key per match, `<prefix>m<ID>`, naming the attempt now
playing. The writer adds with `XADD ... MAXLEN = MAX_ENTRIES` (exact), enough for the longest
match a challenge may ask for, and keeps both keys expiring `RUNNING_TTL` after the last event
(a worker that dies mid-match leaves nothing for long); once the match ends they expire
`END_TTL` later. The reader asks which attempt plays, then `XREAD`s that attempt's stream from
the last id it got, so each poll costs one round trip and returns only new entries.

Redis is best-effort here: a writer that cannot reach it logs once and drops the rest of its
events (the match plays and is recorded all the same); a reader logs once per outage and returns
nothing, so the watchers see the match's status only until Redis is back.

Only public events are written (`arena.workers.live.public_event`); who may read them, and the
one-trick hold, stay the server's (docs/security.md).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any
from urllib.parse import urlsplit

from arena.engine.rules import TRICKS_PER_DEAL

log = logging.getLogger("arena.workers.live")

PREFIX_ENV = "ARENA_LIVE_PREFIX"
DEFAULT_PREFIX = "arena:live:"
CHALLENGE_DEALS = 200  # arena.service.challenge_limits.LIMITS.deals (a test checks they agree)
#: one "deal" and one "deal_end" a deal around its tricks, and the "match_end"
MAX_ENTRIES = CHALLENGE_DEALS * (TRICKS_PER_DEAL + 2) + 1
RUNNING_TTL = 3 * 3600  # seconds a stream lives after its last event while the match plays
END_TTL = 600  # seconds a stream lives after the match ended (the record takes over)
CONNECT_TIMEOUT = 1.0  # seconds: a Redis that is down costs the match one such wait, once
IO_TIMEOUT = 2.0
FIELD = b"e"

_clients: dict[str, Any] = {}
_clients_lock = threading.Lock()


def shown(url: str) -> str:
    """`url` for a log line: any password hidden."""
    parts = urlsplit(url)
    return url.replace(f":{parts.password}@", ":***@", 1) if parts.password else url


def client(url: str) -> Any:
    """One client (one connection pool) per URL in this process, shared by its writers and readers."""
    import redis

    with _clients_lock:
        found = _clients.get(url)
        if found is None:
            found = _clients[url] = redis.Redis.from_url(
                url, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=IO_TIMEOUT
            )
        return found


def key_prefix() -> str:
    return os.environ.get(PREFIX_ENV) or DEFAULT_PREFIX


def attempt_key(prefix: str, match_id: int) -> str:
    return f"{prefix}m{match_id}"


def stream_key(prefix: str, match_id: int, attempt: int) -> str:
    return f"{prefix}m{match_id}:a{attempt}"


class RedisSink:
    """Adds one attempt's public events to its stream; never raises (see the module's docstring)."""

    def __init__(self, url: str, match_id: int, attempt: int, prefix: str | None = None) -> None:
        prefix = prefix or key_prefix()
        self.url, self.match_id = url, match_id
        self.pointer = attempt_key(prefix, match_id)
        self.stream = stream_key(prefix, match_id, attempt)
        self.down = False
        self.closed = False
        self._run(lambda p: p.delete(self.stream).set(self.pointer, attempt, ex=RUNNING_TTL))

    def append(self, event: dict[str, Any]) -> None:
        line = json.dumps(event, separators=(",", ":"))
        self._run(
            lambda p: (
                p.xadd(self.stream, {FIELD: line}, maxlen=MAX_ENTRIES, approximate=False)
                .expire(self.stream, RUNNING_TTL)
                .expire(self.pointer, RUNNING_TTL)
            )
        )

    def close(self) -> None:
        """The match ended (or its worker gave it up): both keys expire `END_TTL` from now."""
        if not self.closed:
            self.closed = True
            self._run(lambda p: p.expire(self.stream, END_TTL).expire(self.pointer, END_TTL))

    def _run(self, build: Any) -> None:
        if self.down:
            return
        import redis

        try:
            pipe = client(self.url).pipeline(transaction=False)
            build(pipe)
            pipe.execute()
        except redis.RedisError as exc:
            self.down = True  # once: the match goes on without spectators
            log.warning(
                "match %s: no live events for spectators (Redis at %s: %s); the match plays and is "
                "recorded as usual",
                self.match_id, shown(self.url), exc,
            )  # fmt: skip


class RedisSource:
    """Reads a match's stream for `LiveFeed`, as `LiveReader` reads a file: each `poll()` returns the
    events added since the last, a first event naming the attempt, and `restarted` when a new attempt
    began. `poll(limit)` reads about `limit` bytes' worth of entries (`more` says there may be more)."""

    ENTRY_BYTES = 64  # the least an entry takes: how many entries `limit` bytes stand for

    def __init__(self, url: str, match_id: int, prefix: str | None = None) -> None:
        prefix = prefix or key_prefix()
        self.url, self.match_id, self.prefix = url, match_id, prefix
        self.pointer = attempt_key(prefix, match_id)
        self.attempt: int | None = None
        self._last = b"0-0"
        self.restarted = False
        self.more = False
        self.down = False  # Redis did not answer the last poll

    def poll(self, limit: int = -1) -> list[dict[str, Any]]:
        import redis

        self.restarted, self.more = False, False
        count = max(1, limit // self.ENTRY_BYTES) if limit > 0 else None
        out: list[dict[str, Any]] = []
        try:
            current = client(self.url).get(self.pointer)
            attempt = int(current) if current is not None else None
            if attempt is not None and attempt != self.attempt:
                self.restarted = self.attempt is not None
                self.attempt, self._last = attempt, b"0-0"
                out.append({"kind": "attempt", "attempt": attempt})
            if self.attempt is None:
                return out
            stream = stream_key(self.prefix, self.match_id, self.attempt)
            got = client(self.url).xread({stream: self._last}, count=count)
        except (redis.RedisError, ValueError) as exc:
            if not self.down:
                log.warning(
                    "match %s: cannot read its live events (Redis at %s: %s); watchers see its status only",
                    self.match_id, shown(self.url), exc,
                )  # fmt: skip
            self.down = True
            return []
        self.down = False
        entries = got[0][1] if got else []
        for entry_id, fields in entries:
            self._last = entry_id
            try:
                ev = json.loads(fields.get(FIELD, b""))
            except ValueError:
                continue
            if isinstance(ev, dict):
                out.append(ev)
        self.more = count is not None and len(entries) == count
        return out
