"""Play one queued match for real: find the bundles, pick the launcher, call the referee's
`play_match`, and turn its outcome into the plain `MatchResult` the store records.

Runs inside a pool child process (spawned: gRPC does not survive fork) or a Celery worker on another
machine: a job's bundles are found by content hash (`local_bundles`), never through a folder it shares with the server.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from arena import metrics
from arena.logs import match_context, request_context
from arena.store.jobs import MatchJob, MatchResult

log = logging.getLogger("arena.workers")

_LAUNCHERS: dict[str, Any] = {}
_VERIFIED: set[tuple[str, str]] = set()  # (folder, content hash) pairs this process has hashed
_STORES: dict[str, Any] = {}  # database URL -> the store this process fetches bundles from


def bundle_cache() -> Path:
    """This worker's own folder of fetched bundles: ARENA_BUNDLE_CACHE, else $ARENA_HOME/bundles
    (on the server's machine that is the stored copies themselves)."""
    from arena.store.db import arena_home

    return Path(os.environ.get("ARENA_BUNDLE_CACHE") or arena_home() / "bundles")


def local_bundles(job: MatchJob) -> tuple[str, str]:
    """Each seat's bundle folder on this machine: the job's stored path when it exists here and hashes
    to the seat's content hash, else this worker's cached copy, fetched from the store when missing.
    BundleUnavailable (an infrastructure failure, never the bot's) when it cannot be had intact."""
    from arena.sandbox.archive import MAX_BUNDLE_BYTES
    from arena.store.bundles import content_hash, fetch_bundle

    out = []
    for path, digest in zip(job.bundles, job.hashes, strict=True):
        if not digest:  # a job made without hashes (an older runner): the path is all there is
            out.append(path)
            continue
        for folder in (Path(path), bundle_cache() / digest) if path else (bundle_cache() / digest,):
            if (str(folder), digest) in _VERIFIED:
                break
            if folder.is_dir() and content_hash(folder) == digest:
                _VERIFIED.add((str(folder), digest))
                break
        else:
            folder = fetch_bundle(_store(), digest, bundle_cache(), max_bytes=MAX_BUNDLE_BYTES)
            _VERIFIED.add((str(folder), digest))
        out.append(str(folder))
    return out[0], out[1]


def _store() -> Any:
    """The store ARENA_DATABASE_URL names (else $ARENA_HOME/arena.db), opened once per process."""
    from arena.store import Store
    from arena.store.db import database_url

    url = database_url()
    if url not in _STORES:
        _STORES[url] = Store.open(url)
    return _STORES[url]


def make_launcher(name: str) -> Any:
    """The sandbox launcher called `name` (bwrap: the real sandbox; local: unsafe, development only),
    made once per process: setting one up probes the machine."""
    from arena.sandbox.launchers import get_launcher

    if name not in _LAUNCHERS:
        _LAUNCHERS[name] = get_launcher(name, warn=False)
    return _LAUNCHERS[name]


def stop_retired_zygotes(job: MatchJob, playing: tuple[str, str] | None = None) -> int:
    """Stop this process's warm zygotes of the bundles the job names as retired or suspended (not
    this match's own, `playing` here: a challenge may still play one), so an unplayable version
    holds no sandbox past this worker's next match; returns how many were stopped."""
    stopped = 0
    # a retired bundle's folder here: the server's path, or this worker's cached copy of the same hash
    retired = set(job.retired) | {str(bundle_cache() / Path(path).name) for path in job.retired}
    for path in retired - set(job.bundles) - set(playing or ()):
        for launcher in _LAUNCHERS.values():
            pool = getattr(launcher, "warm", None)
            if pool is not None:
                stopped += pool.retire(path)
    if stopped:
        logging.getLogger("arena.workers").info(
            "stopped %d warm zygote(s) of retired or suspended bots", stopped
        )
    return stopped


def bwrap_available() -> bool:
    """True when the bwrap launcher can run here."""
    from arena.sandbox.launchers import LauncherUnavailable, get_launcher

    try:
        get_launcher("bwrap")
    except LauncherUnavailable:
        return False
    return True


def run_job(job: MatchJob) -> MatchResult:
    """Play the match; bot misbehaviour comes back as verdicts, never as an exception."""
    from arena.sandbox.bundle import load_bundle

    started = time.monotonic()
    # the worker's lines about this match say which, and which call queued it (a challenge's request id)
    with match_context(job.match_id), request_context(job.request_id):
        paths = local_bundles(job)  # BundleUnavailable fails the job, not a seat: it is requeued
        stop_retired_zygotes(job, paths)
        bundles = (load_bundle(paths[0]), load_bundle(paths[1]))
        live = _live_writer(job.live, job.attempt)  # spectators follow it one trick behind
        try:
            log.info("playing %s@%s v %s@%s (attempt %d)", *job.names[0], *job.names[1], job.attempt)
            outcome = _play(job, bundles, live)
        finally:
            if live is not None:
                live.close()
        # verdict names only: a detail may quote a bot, and the result is the operator's (docs/security.md)
        log.info("played: winner %s, verdicts %s", outcome.winner, " ".join(outcome.verdicts))
    metrics.match_played(time.monotonic() - started)
    return MatchResult(
        winner=outcome.winner,
        void=outcome.void,
        verdicts=outcome.verdicts,
        verdict_details=outcome.verdict_details,
        lines=outcome.lines,
        deals_played=outcome.deals_played,
        replay=outcome.replay_bytes,
        logs=seat_logs(outcome),
        duration=time.monotonic() - started,
    )


def _live_writer(path: str, attempt: int) -> Any:
    """The live feed's writer, or None: a worker that cannot write it (a read-only home on another
    host) still plays the match; spectators then see it once it is recorded."""
    from arena.workers.live import LiveWriter

    if not path:
        return None
    try:
        return LiveWriter(path, attempt)
    except OSError as exc:
        logging.getLogger("arena.workers").warning("no live feed for %s: %s", path, exc)
        return None


def _play(job: MatchJob, bundles: tuple[Any, Any], live: Any) -> Any:
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.workers.match import play_match

    return play_match(
        bundles,
        rules=Rules.from_pairs(job.rules),
        seed=job.seed,
        time_control=TimeControl(**job.time_control),
        launcher=make_launcher(job.launcher),
        match_id=f"m{job.match_id}",
        pause_idle=True,  # fair clocks when matches share the cores: docs/sandbox.md
        salt=bytes.fromhex(job.salt) if job.salt else None,  # the one behind Match.commitment
        names=job.names if all(name for name, _ in job.names) else None,  # registered, never bot.toml's
        on_event=live,
    )


def seat_logs(outcome: Any) -> tuple[str, str]:
    """Each seat's own log, for its owner only: its Log lines from the record, then its verdict if it
    failed, with the private part of the verdict (what it sent, the last lines of its output)."""
    out: list[list[str]] = [[], []]
    for entry in outcome.record.logs:
        if entry.seat in (0, 1):  # Log lines where they arrived, then its stdout/stderr (source "output")
            where = "[output]" if entry.source else f"[deal {entry.deal} trick {entry.trick}]"
            out[entry.seat].append(f"{where} {entry.text}")
    private = list(outcome.record.result.private_details) + ["", ""]
    for seat in (0, 1):
        if outcome.verdicts[seat] != "OK":
            out[seat].append(f"[verdict] {outcome.verdicts[seat]}: {outcome.verdict_details[seat]}")
            if private[seat]:
                out[seat].append(private[seat])
    return "\n".join(out[0]), "\n".join(out[1])
