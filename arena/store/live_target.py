"""Where a match's live events travel, as a job names it (`MatchJob.live`): a file or a Redis stream.

With no Redis configured, a worker appends them to `$ARENA_HOME/live/m<ID>.jsonl` on its own disk and
the server reads that file: fine for `arena serve --workers N` on one machine. With Redis configured
(`ARENA_LIVE_URL`, else `ARENA_BROKER_URL` when set), the job names the match's stream instead
(`stream:m<ID>`, no path): the worker adds the events to Redis and any server replica reads them
there, so a worker and a server share no folder (docs/deploy.md). Both ends decide with
`live_url()`, so a runner and the servers that watch its matches must be configured alike.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

LIVE_URL_ENV = "ARENA_LIVE_URL"
BROKER_URL_ENV = "ARENA_BROKER_URL"
STREAM = "stream:"  # a job's `live` naming the match's Redis stream


class Transport(StrEnum):
    """How live events travel from the worker to the server."""

    FILE = "file"  # a file on a disk both share (one machine)
    REDIS = "redis"  # Redis streams: no shared disk


def live_url() -> str:
    """The Redis URL live events go through, or "" for the local file."""
    return os.environ.get(LIVE_URL_ENV) or os.environ.get(BROKER_URL_ENV) or ""


def transport() -> Transport:
    return Transport.REDIS if live_url() else Transport.FILE


def stream_target(match_id: int) -> str:
    return f"{STREAM}m{match_id}"


def stream_match(target: str) -> int | None:
    """The match id a stream target names, or None for a file's path (or "")."""
    if not target.startswith(STREAM + "m"):
        return None
    try:
        return int(target[len(STREAM) + 1 :])
    except ValueError:
        return None


def live_target(live_dir: str | Path | None, match_id: int) -> str:
    """What a job's `live` names for `match_id`: its stream when Redis is configured, else its file in
    `live_dir` ("" for none)."""
    if transport() is Transport.REDIS:
        return stream_target(match_id)
    if live_dir is None:
        return ""
    return str(Path(live_dir) / f"m{match_id}.jsonl")
