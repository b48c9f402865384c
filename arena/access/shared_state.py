"""The counters every replica of `arena serve` must share, in Redis: rate-limit buckets and
concurrency slots (with the bytes an upload reserves). Sessions use the same connection
(`arena.web.sessions.SharedSessions`).

Without a shared-state URL (`arena serve --shared-state`, `ARENA_STATE_URL`) each process keeps
these counters in its own memory (`MemoryLeases`, `RateLimiter`'s own buckets): right for one
process, but two replicas behind a proxy would each give a caller a whole budget. With one, every
replica reads and writes the same keys, each change in one Lua script (atomic on the server, run by
EVALSHA), and the time is Redis's (`TIME`), so the replicas' clocks need not agree.

- A token bucket is a hash `<prefix>rl:<sha256(budget:key)>` (tokens, last), expiring when it
  would be full again: an idle caller costs no memory.
- A concurrency slot is a lease: a member (the holder's random id) of a sorted set per group
  (owner or address) and one per kind (the total), scored by its expiry. The process that holds it
  renews it every third of `LEASE` seconds; a replica that crashed stops renewing, and its slots
  come back `LEASE` seconds later. Released slots go at once.

No raw token or session id is written: keys carry SHA-256 digests (docs/security.md).
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import redis

log = logging.getLogger("arena.access")
ENV = "ARENA_STATE_URL"
PREFIX = "arena:"
LEASE = 60.0  # seconds a slot outlives the last renewal of a process that stopped renewing it
T = TypeVar("T")


class SharedStateError(Exception):
    """The shared-state URL is malformed or its Redis does not answer."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_BUCKET = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local cap, rate, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 'tokens', 'last')
local tokens = tonumber(v[1]) or cap
local last = tonumber(v[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - last) * rate)
local wait = 0
if tokens < cost then wait = (cost - tokens) / rate else tokens = tokens - cost end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'last', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate * 1000) + 1000)
return tostring(wait)
"""

# KEYS: group set, total set, group reservations. ARGV: holder, per group, total, lease seconds.
# Drops the expired leases (and their reservations) first; 1 if the slot was taken, else 0.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, h in ipairs(gone) do redis.call('HDEL', KEYS[3], h) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) or redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then
  return 0
end
local lease = tonumber(ARGV[4])
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('ZADD', KEYS[2], now + lease, ARGV[1])
local ms = math.ceil(lease * 2000)
redis.call('PEXPIRE', KEYS[1], ms)
redis.call('PEXPIRE', KEYS[2], ms)
return 1
"""

# KEYS: group set, total set, group reservations. ARGV: holder, lease seconds. Renews a held lease.
_RENEW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local lease = tonumber(ARGV[2])
local ms = math.ceil(lease * 2000)
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], 'XX', now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], ms)
end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ms) end
return 1
"""

# KEYS: group set, group reservations. ARGV: holder, bytes left before the flight, cap, lease.
# Reserves min(cap, left - flight) for the holder; returns {room, flight} (room 0: nothing left).
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
for _, h in ipairs(gone) do redis.call('HDEL', KEYS[2], h) end
local flight = 0
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do if all[i] ~= ARGV[1] then flight = flight + tonumber(all[i + 1]) end end
local left = tonumber(ARGV[2]) - flight
if left <= 0 then return {0, flight} end
local room = math.min(tonumber(ARGV[3]), left)
redis.call('HSET', KEYS[2], ARGV[1], room)
redis.call('PEXPIRE', KEYS[2], math.ceil(tonumber(ARGV[4]) * 2000))
return {room, flight}
"""


class SharedState:
    """One Redis connection for a process's shared counters, with the thread that renews its leases."""

    def __init__(self, url: str, prefix: str = PREFIX, lease: float = LEASE) -> None:
        import redis

        try:
            self.client: redis.Redis = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=5)
            self.client.ping()
        except (ValueError, redis.exceptions.RedisError) as exc:
            raise SharedStateError(
                f"shared state {url!r}: {exc}; give a reachable redis://HOST:PORT/DB "
                f"(--shared-state or {ENV}), or none for one process"
            ) from None
        self.url, self.prefix, self.lease = url, prefix, lease
        self.bucket = self.client.register_script(_BUCKET)
        self.acquire_script = self.client.register_script(_ACQUIRE)
        self.renew_script = self.client.register_script(_RENEW)
        self.reserve_script = self.client.register_script(_RESERVE)
        self._lock = threading.Lock()
        self._held: dict[str, list[str]] = {}  # holder -> its keys (group, total, reservations)
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._shared: dict[str, Any] = {}

    @classmethod
    def open(cls, url: str | None = None) -> SharedState | None:
        """The state at `url`, else at $ARENA_STATE_URL; None when neither is set (one process)."""
        url = url or os.environ.get(ENV) or None
        return cls(url) if url else None

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def shared(self, name: str, make: Callable[[], T]) -> T:
        """One object per name for this state (e.g. a transport's slots), made on first use."""
        with self._lock:
            if name not in self._shared:
                self._shared[name] = make()
            found: T = self._shared[name]
            return found

    def take(self, budget: str, key: str, count: int, rate: float, cost: float) -> float:
        """Spend `cost` from the bucket (`count` at most, refilled at `rate`/s): 0.0, or the seconds
        until it would have enough (nothing spent)."""
        bucket = self.key("rl", digest(f"{budget}:{key}"))
        wait = self.bucket(keys=[bucket], args=[count, rate, cost], client=self.client)
        return float(wait)

    def hold(self, holder: str, keys: list[str]) -> None:
        with self._lock:
            self._held[holder] = keys
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew, name="arena-leases", daemon=True)
                self._renewer.start()

    def drop(self, holder: str) -> None:
        with self._lock:
            self._held.pop(holder, None)

    def _renew(self) -> None:
        while not self._stop.wait(self.lease / 3):
            with self._lock:
                held = list(self._held.items())
            try:
                pipe = self.client.pipeline(transaction=False)
                for holder, keys in held:
                    self.renew_script(keys=keys, args=[holder, self.lease], client=pipe)
                pipe.execute()
            except Exception:  # Redis away for a while: the next round tries again
                log.warning("renewing %d slot lease(s) in %s failed", len(held), self.url, exc_info=True)

    def close(self) -> None:
        """Stop renewing (the slots still held expire after their lease) and disconnect."""
        self._stop.set()
        self.client.close()


class Leases(Protocol):
    """Concurrency slots of one kind: at most `per_group` per group (owner, address) and `total` in
    all, each with bytes it may reserve against its group's quota."""

    def acquire(self, group: str, per_group: int, total: int) -> str | None:
        """A holder id for a new slot of `group`, or None when the group or the total is full."""

    def release(self, group: str, holder: str) -> None: ...

    def count(self, group: str | None = None) -> int: ...

    def reserve(self, group: str, holder: str, left: int, cap: int) -> tuple[int, int]:
        """Reserve min(cap, left - flight) bytes for `holder`, where flight is what the group's other
        holders reserve: (room, flight), room 0 when nothing is left (and nothing reserved)."""

    def set_reserved(self, group: str, holder: str, nbytes: int) -> None: ...


class MemoryLeases:
    """`Leases` in this process's memory: slots end with their holder's release or the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, set[str]] = {}
        self._reserved: dict[str, dict[str, int]] = {}

    def acquire(self, group: str, per_group: int, total: int) -> str | None:
        with self._lock:
            mine = self._open.get(group, set())
            if len(mine) >= per_group or sum(len(v) for v in self._open.values()) >= total:
                return None
            holder = secrets.token_hex(8)
            self._open.setdefault(group, set()).add(holder)
            return holder

    def release(self, group: str, holder: str) -> None:
        with self._lock:
            mine = self._open.get(group, set())
            mine.discard(holder)
            if not mine:
                self._open.pop(group, None)
            res = self._reserved.get(group, {})
            res.pop(holder, None)
            if not res:
                self._reserved.pop(group, None)

    def count(self, group: str | None = None) -> int:
        with self._lock:
            if group is not None:
                return len(self._open.get(group, ()))
            return sum(len(v) for v in self._open.values())

    def reserve(self, group: str, holder: str, left: int, cap: int) -> tuple[int, int]:
        with self._lock:
            res = self._reserved.setdefault(group, {})
            flight = sum(n for h, n in res.items() if h != holder)
            if left - flight <= 0:
                return 0, flight
            res[holder] = min(cap, left - flight)
            return res[holder], flight

    def set_reserved(self, group: str, holder: str, nbytes: int) -> None:
        with self._lock:
            res = self._reserved.get(group)
            if res is not None and holder in res:
                res[holder] = nbytes


class RedisLeases:
    """`Leases` in Redis, shared by every replica on `state`: see the module's docstring."""

    def __init__(self, state: SharedState, kind: str) -> None:
        self.state, self.kind = state, kind

    def _keys(self, group: str) -> list[str]:
        g = digest(group)
        return [
            self.state.key("slot", self.kind, g),
            self.state.key("slot", self.kind, "*total"),
            self.state.key("reserved", self.kind, g),
        ]

    def acquire(self, group: str, per_group: int, total: int) -> str | None:
        holder = secrets.token_hex(12)
        keys = self._keys(group)
        if not self.state.acquire_script(keys=keys, args=[holder, per_group, total, self.state.lease]):
            return None
        self.state.hold(holder, keys)
        return holder

    def release(self, group: str, holder: str) -> None:
        self.state.drop(holder)
        group_key, total_key, reserved_key = self._keys(group)
        pipe = self.state.client.pipeline()
        pipe.zrem(group_key, holder)
        pipe.zrem(total_key, holder)
        pipe.hdel(reserved_key, holder)
        pipe.execute()

    def count(self, group: str | None = None) -> int:
        group_key, total_key, _ = self._keys(group or "")
        seconds, micros = self.state.client.time()
        live = f"({seconds + micros / 1e6}"  # leases expiring after now
        return int(self.state.client.zcount(total_key if group is None else group_key, live, "+inf"))

    def reserve(self, group: str, holder: str, left: int, cap: int) -> tuple[int, int]:
        group_key, _, reserved_key = self._keys(group)
        room, flight = self.state.reserve_script(
            keys=[group_key, reserved_key], args=[holder, left, cap, self.state.lease]
        )
        return int(room), int(flight)

    def set_reserved(self, group: str, holder: str, nbytes: int) -> None:
        _, _, reserved_key = self._keys(group)
        self.state.client.hset(reserved_key, holder, nbytes)


def leases(state: SharedState | None, kind: str) -> Leases:
    """The slots of `kind`: in Redis when there is shared state, else in this process."""
    return RedisLeases(state, kind) if state is not None else MemoryLeases()
