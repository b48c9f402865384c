"""Live events of a match being played, for spectators: one JSON line per public event.

The worker that plays a match appends to `$ARENA_HOME/live/m<ID>.jsonl` (folder 0700, file 0600:
only the server reads it). Only what both seats and the rules make public goes in: the dealer, the
two cards of each trick and who took it, each deal's result. Never a hand, a drawn card or the
stock. The service (`arena.service.ops_watch`) releases each trick one full trick later.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

LIVE_DIR = "live"
ATTEMPT = "attempt"  # the kind of a file's first line: which attempt at the match wrote it


def live_path(home: str | Path, match_id: int) -> Path:
    return Path(home) / LIVE_DIR / f"m{match_id}.jsonl"


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


class LiveWriter:
    """An `on_event` callback that appends public events to a match's live file.

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

    def __call__(self, ev: dict[str, Any]) -> None:
        out = public_event(ev)
        if out is not None and not self._file.closed:
            self._file.write(json.dumps(out, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self._file.close()


def read_events(path: str | Path) -> list[dict[str, Any]]:
    """Every complete line of a live file (a line still being written is left for the next read)."""
    reader = LiveReader(path)
    return reader.poll()


class LiveReader:
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
