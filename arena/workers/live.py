"""Live events of a match being played, for spectators: one JSON line per public event.

The worker that plays a match hands them to one of two transports (`arena.store.live_target`):
by default it appends to `$ARENA_HOME/live/m<ID>.jsonl` (folder 0700, file 0600: only the server
reads it), which the server reads when both share that disk (`arena serve` on one machine); with
Redis configured it adds them to the match's Redis stream (`arena.workers.live_redis`), which any
server replica reads. `LiveWriter` is the worker's end, `open_reader` the server's, whichever the
transport. Only what both seats and the rules make public goes in: the dealer, the two cards of each
trick and who took it, each deal's result. Never a hand, a drawn card or the stock. The service
(`arena.service.ops_watch`) releases each trick one full trick later.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

from arena.store.live_target import live_target, live_url, stream_match

LIVE_DIR = "live"
ATTEMPT = "attempt"  # the kind of a file's first line: which attempt at the match wrote it


def live_path(home: str | Path, match_id: int) -> Path:
    return Path(home) / LIVE_DIR / f"m{match_id}.jsonl"


def live_source(home: str | Path, match_id: int) -> str:
    """Where a server with $ARENA_HOME `home` reads match `match_id`'s live events: with Redis
    configured, the match's stream (as `arena.ladder.server_run` names it in the job), else the file
    at its `live_path`."""
    return live_target(Path(home) / LIVE_DIR, match_id)


def _redis_url() -> str:
    """The Redis URL for a job naming a stream: configured, else (a Celery worker without
    ARENA_BROKER_URL) the broker's default."""
    url = live_url()
    if url:
        return url
    from arena.workers.celery_app import broker_url

    return broker_url()


def public_event(ev: dict[str, Any]) -> dict[str, Any] | None:
    """The public part of a referee event (`MatchRunner.on_event`), or None for a private one."""
    kind = ev.get("event")
    if kind == "deal_start":
        return {"kind": "deal", "deal": ev["deal"], "dealer": ev["dealer"]}
    if kind == "trick":
        return {
            "kind": "trick",
            "deal": ev["deal"],
            "trick": ev["trick"],
            "leader": ev["leader"],
            "cards": list(ev["cards"]),
            "winner": ev["winner"],
        }
    if kind == "deal_end":
        return {
            "kind": "deal_end",
            "deal": ev["deal"],
            "winner": ev.get("winner"),
            "lines": list(ev.get("lines", [])),
        }
    if kind == "match_end":
        return {"kind": "match_end"}
    return None


class Sink(Protocol):
    """A transport's writing end: one public event at a time, then `close` when the match ends."""

    def append(self, event: dict[str, Any]) -> None: ...

    def close(self) -> None: ...


class LiveWriter:
    """An `on_event` callback that hands a match's public events to its transport: `target` is a
    job's `live`, a stream target (`stream:m<ID>`) or a file's path."""

    def __init__(self, target: str | Path, attempt: int) -> None:
        match_id = stream_match(str(target))
        self.sink: Sink
        if match_id is not None:
            from arena.workers.live_redis import RedisSink

            self.sink = RedisSink(_redis_url(), match_id, attempt)
        else:
            self.sink = FileSink(target, attempt)

    def __call__(self, ev: dict[str, Any]) -> None:
        out = public_event(ev)
        if out is not None:
            self.sink.append(out)

    def close(self) -> None:
        self.sink.close()


class FileSink:
    """Appends public events to a match's live file.

    The file starts with a line naming the attempt (the match row's `attempts` after the claim), so a
    reader tells this attempt's file from an earlier attempt's that a dead worker left behind."""

    def __init__(self, path: str | Path, attempt: int) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        try:  # a new file, not a truncated one: readers of an earlier attempt's file see it replaced
            self.path.unlink()
        except FileNotFoundError:
            pass
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        self._file = os.fdopen(fd, "w", buffering=1)  # line-buffered: each event is visible at once
        self._file.write(json.dumps({"kind": ATTEMPT, "attempt": attempt}) + "\n")

    def append(self, event: dict[str, Any]) -> None:
        if not self._file.closed:
            self._file.write(json.dumps(event, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self._file.close()


def read_events(target: str | Path) -> list[dict[str, Any]]:
    """Every event written so far (a file's line still being written is left for the next read)."""
    reader = open_reader(target)
    return reader.poll()


class Source(Protocol):
    """A transport's reading end (see `FileSource`)."""

    restarted: bool
    more: bool

    def poll(self, limit: int = -1) -> list[dict[str, Any]]: ...


def open_reader(target: str | Path) -> Source:
    """The reading end for a `live_source` target: its Redis stream, or its file."""
    match_id = stream_match(str(target))
    if match_id is not None:
        from arena.workers.live_redis import RedisSource

        return RedisSource(_redis_url(), match_id)
    return FileSource(target)


class FileSource:
    """Reads a live file incrementally: each `poll()` returns the events completed since the last.

    A watcher polls several times a second, so the file is not re-read from the start each time.
    A file that shrank or was replaced (a new attempt at the match truncates it) is read again from
    its start; `restarted` tells the caller so. `poll(limit)` reads at most `limit` bytes (a long
    match's file is then read in pieces, never held whole); `more` says the limit was reached."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._offset = 0
        self._ident: tuple[int, int] | None = None
        self._partial = b""
        self.restarted = False
        self.more = False

    def poll(self, limit: int = -1) -> list[dict[str, Any]]:
        self.restarted, self.more = False, False
        try:
            with open(self.path, "rb") as f:
                st = os.fstat(f.fileno())
                ident = (st.st_dev, st.st_ino)
                if self._ident is not None and (ident != self._ident or st.st_size < self._offset):
                    self._offset, self._partial, self.restarted = 0, b"", True
                self._ident = ident
                f.seek(self._offset)
                chunk = f.read(limit)
        except FileNotFoundError:
            return []
        self.more = 0 < limit == len(chunk)
        self._offset += len(chunk)
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()  # the text after the last newline is unfinished
        out = []
        for line in lines:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if isinstance(ev, dict):
                out.append(ev)
        return out
