"""Logging for the arena's long-running parts (referee, pool, workers, server, web): one line per
event, with the match id where there is one.

The match id travels in a context variable, not in every call: the referee's runner sets it for its
match's task (`match_context`), and every line logged from that task or the tasks and threads it
starts (asyncio copies the context into both) says `[match M]`. The `arena` command sets the level
once (`--log-level`, else ARENA_LOG_LEVEL, else the command's default). It sits at the bottom of the
package beside the engine: every layer may log, and it imports nothing of the arena.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import sys
from collections.abc import Iterator

MATCH: contextvars.ContextVar[str] = contextvars.ContextVar("arena_match", default="")
FORMAT = "%(asctime)s %(levelname)s %(name)s%(match)s: %(message)s"
LEVELS = ("debug", "info", "warning", "error")
ENV = "ARENA_LOG_LEVEL"


@contextlib.contextmanager
def match_context(match_id: str | int) -> Iterator[None]:
    """Lines logged inside carry `[match M]`."""
    token = MATCH.set(str(match_id))
    try:
        yield
    finally:
        MATCH.reset(token)


class MatchField(logging.Filter):
    """Fills `%(match)s` on every record: ` [match M]` inside a match's context, else nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "match"):
            current = MATCH.get()
            record.match = f" [match {current}]" if current else ""
        return True


class LevelError(ValueError):
    """A log level that is not one of LEVELS; the message names the value and where it came from."""


def level_of(text: str | None, where: str) -> int | None:
    """The logging level named by `text` (None for None or empty); LevelError names `where`."""
    if not text:
        return None
    name = text.strip().lower()
    if name not in LEVELS:
        raise LevelError(f"{where} {text!r}: expected one of {', '.join(LEVELS)}")
    return getattr(logging, name.upper())


def configure(level: str | None = None, default: str = "warning") -> int:
    """Set up the root logger once for this process: one line per event on stderr, at `level`, else
    ARENA_LOG_LEVEL, else `default`. A `level` given once (`--log-level`) is put in ARENA_LOG_LEVEL,
    so that it holds for later calls (a server's own default) and for the worker processes it starts.
    Called again, it only sets the level. Returns the level set."""
    if level:
        level_of(level, "--log-level")
        os.environ[ENV] = level.strip().lower()
    chosen = level_of(os.environ.get(ENV), ENV) or level_of(default, "default")
    assert chosen is not None
    root = logging.getLogger()
    if not any(getattr(h, "arena", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.addFilter(MatchField())
        handler.arena = True  # type: ignore[attr-defined]  # marks the handler this module added
        root.addHandler(handler)
    root.setLevel(chosen)
    logging.getLogger("alembic").setLevel(max(chosen, logging.WARNING))  # a migration's every step is noise
    return chosen
