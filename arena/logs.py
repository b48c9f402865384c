"""Logging for the arena's long-running parts (referee, pool, workers, server, web): one line per
event, with the match id where there is one.

The match id travels in a context variable, not in every call: the referee's runner sets it for its
match's task (`match_context`), and every line logged from that task or the tasks and threads it
starts (asyncio copies the context into both) says `[match M]`. A request id travels the same way
(`request_context`): the gRPC servicer and the web set one per call (the caller's `x-request-id`, or
a new one), a challenge stores it with the match it queues, and the worker that plays the match sets
it again, so its lines about the match say `[req R]` too. The `arena` command sets the level once
(`--log-level`, else ARENA_LOG_LEVEL, else the command's default) and the format (`--log-format
text|json`, else ARENA_LOG_FORMAT): json writes one JSON object per line (`ts`, `level`, `logger`,
`msg`, and `match`, `request` when set), for a log shipper. It sits at the bottom of the package
beside the engine: every layer may log, and it imports nothing of the arena.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import re
import secrets
import sys
from collections.abc import Iterator

MATCH: contextvars.ContextVar[str] = contextvars.ContextVar("arena_match", default="")
REQUEST: contextvars.ContextVar[str] = contextvars.ContextVar("arena_request", default="")
FORMAT = "%(asctime)s %(levelname)s %(name)s%(match)s%(request)s: %(message)s"
LEVELS = ("debug", "info", "warning", "error")
FORMATS = ("text", "json")
ENV = "ARENA_LOG_LEVEL"
FORMAT_ENV = "ARENA_LOG_FORMAT"
REQUEST_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")  # a caller's x-request-id we keep; else a new one
REQUEST_HEADER = "x-request-id"


def request_id(given: str | None = None) -> str:
    """The caller's request id when it is a plain token (letters, digits, `_.-`, at most 64), else a
    new random one: a log line never carries what a caller typed beyond that."""
    if given and REQUEST_ID.match(given):
        return given
    return secrets.token_hex(8)


@contextlib.contextmanager
def request_context(rid: str) -> Iterator[None]:
    """Lines logged inside carry `[req R]` (nothing for an empty id)."""
    token = REQUEST.set(rid)
    try:
        yield
    finally:
        REQUEST.reset(token)


@contextlib.contextmanager
def match_context(match_id: str | int) -> Iterator[None]:
    """Lines logged inside carry `[match M]`."""
    token = MATCH.set(str(match_id))
    try:
        yield
    finally:
        MATCH.reset(token)


class MatchField(logging.Filter):
    """Fills `%(match)s` and `%(request)s` on every record: ` [match M]` inside a match's context,
    ` [req R]` inside a request's, else nothing; the bare ids go in `match_id` and `request_id`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "match"):
            current = MATCH.get()
            record.match = f" [match {current}]" if current else ""
            record.match_id = current
        if not hasattr(record, "request"):
            rid = REQUEST.get()
            record.request = f" [req {rid}]" if rid else ""
            record.request_id = rid
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC, ISO 8601), level, logger, msg, and match and request
    when set, and exc (the traceback) for an exception."""

    def format(self, record: logging.LogRecord) -> str:
        import datetime as dt

        out: dict[str, object] = {
            "ts": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in ("match_id", "request_id"):
            value = getattr(record, key, "")
            if value:
                out[key.removesuffix("_id")] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def format_of(text: str | None, where: str) -> str | None:
    if not text:
        return None
    name = text.strip().lower()
    if name not in FORMATS:
        raise LevelError(f"{where} {text!r}: expected one of {', '.join(FORMATS)}")
    return name


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


def configure(level: str | None = None, default: str = "warning", log_format: str | None = None) -> int:
    """Set up the root logger once for this process: one line per event on stderr, at `level`, else
    ARENA_LOG_LEVEL, else `default`, as text or JSON (`log_format`, else ARENA_LOG_FORMAT, else text).
    A `level` or `log_format` given once (`--log-level`, `--log-format`) is put in the environment,
    so that it holds for later calls (a server's own default) and for the worker processes it starts.
    Called again, it only sets the level and the format. Returns the level set."""
    if level:
        level_of(level, "--log-level")
        os.environ[ENV] = level.strip().lower()
    if log_format:
        format_of(log_format, "--log-format")
        os.environ[FORMAT_ENV] = log_format.strip().lower()
    chosen = level_of(os.environ.get(ENV), ENV) or level_of(default, "default")
    assert chosen is not None
    shape = format_of(os.environ.get(FORMAT_ENV), FORMAT_ENV) or "text"
    formatter = JsonFormatter() if shape == "json" else logging.Formatter(FORMAT)
    root = logging.getLogger()
    for h in root.handlers:
        if getattr(h, "arena", False):
            h.setFormatter(formatter)
    if not any(getattr(h, "arena", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(formatter)
        handler.addFilter(MatchField())
        handler.arena = True  # type: ignore[attr-defined]  # marks the handler this module added
        root.addHandler(handler)
    root.setLevel(chosen)
    logging.getLogger("alembic").setLevel(max(chosen, logging.WARNING))  # a migration's every step is noise
    return chosen
