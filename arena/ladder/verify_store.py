"""`arena admin verify-store`: does what a store holds still add up?

Three audits, each by the one implementation the arena already has for it:
- every recorded match's replay re-simulates (arena.replay.verify, as `arena replay verify` does) to
  the result recorded on its match row (winner, void);
- every stored bundle (blob in the database, folder on disk) hashes to its content hash
  (arena.store.bundles.fetch_bundle unpacks and checks a blob the way a worker does);
- every season's ratings re-derive from its replays (arena.ladder.standings.verify_ratings).
Each problem is one line naming the match, bundle or season.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import func, select

from arena.bundlehash import tree_hash
from arena.ladder.standings import verify_ratings
from arena.proto.codec import RecordError, decode_record
from arena.replay.export import record_to_json
from arena.replay.record import check_record
from arena.replay.verify import RecordFailure, replay_json
from arena.store.bundles import BundleUnavailable, fetch_bundle
from arena.store.models import BotVersion, BundleBlob, Match, Replay, Season
from arena.store.repo import Store

#: `progress(stage, done, total)` as the audit advances.
Progress = Callable[[str, int, int], None]
BATCH = 500  # replays read per query
#: The most a blob may unpack to here: above the sandbox's cap on a submitted bundle (64 MiB), so that
#: only a damaged blob, never an accepted bundle, trips it (the ladder does not import the sandbox).
AUDIT_MAX_BYTES = 1 << 30


def _quiet(stage: str, done: int, total: int) -> None:
    """No progress to show."""


@dataclass
class StoreAudit:
    """What verify-store checked and every mismatch it found."""

    replays: int = 0
    bundles: int = 0
    seasons: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_store(store: Store, progress: Progress = _quiet) -> StoreAudit:
    audit = StoreAudit()
    check_replays(store, audit, progress)
    check_bundles(store, audit, progress)
    check_standings(store, audit, progress)
    return audit


def replay_problem(m: Match, data: bytes) -> str | None:
    """Why match `m`'s stored replay does not re-simulate to its recorded result, or None."""
    try:
        record = check_record(decode_record(data))
        verified = replay_json(record_to_json(record))
    except (RecordError, RecordFailure, ValueError) as exc:
        return f"match {m.id}: the replay does not re-simulate: {exc}"
    r = record.result
    winner = None if r.winner < 0 else r.winner
    if verified.verdict is None and verified.match.winner != winner:
        return (
            f"match {m.id}: the replay plays out to winner {verified.match.winner}, its record says {winner}"
        )
    if (m.winner, bool(m.void)) != (winner, bool(r.void)):
        return (
            f"match {m.id}: recorded winner {m.winner} void {bool(m.void)}, "
            f"the replay says winner {winner} void {bool(r.void)}"
        )
    return None


def check_replays(store: Store, audit: StoreAudit, progress: Progress) -> None:
    with store.read() as s:
        total = s.scalar(select(func.count()).select_from(Replay)) or 0
    last = -1
    while True:
        with store.read() as s:
            rows = list(
                s.execute(
                    select(Match, Replay.data)
                    .join(Replay, Replay.match_id == Match.id)
                    .where(Match.id > last)
                    .order_by(Match.id)
                    .limit(BATCH)
                )
            )
        if not rows:
            break
        for m, data in rows:
            progress("replays", audit.replays, total)
            problem = replay_problem(m, data)
            if problem:
                audit.problems.append(problem)
            audit.replays += 1
        last = rows[-1][0].id
    with store.read() as s:
        missing = s.scalars(
            select(Match.id)
            .outerjoin(Replay, Replay.match_id == Match.id)
            .where(Match.status == "done", Match.record_seq.is_not(None), Replay.match_id.is_(None))
        ).all()
    audit.problems += [f"match {mid}: recorded but its replay is missing" for mid in missing]
    progress("replays", audit.replays, total)


def check_bundles(store: Store, audit: StoreAudit, progress: Progress) -> None:
    with store.read() as s:
        blobs = list(s.scalars(select(BundleBlob.content_hash).order_by(BundleBlob.content_hash)))
        versions = list(s.execute(select(BotVersion.content_hash, BotVersion.path).distinct()))
    total = len(blobs) + len(versions)
    with tempfile.TemporaryDirectory(prefix="arena-verify-") as cache:
        for digest in blobs:
            progress("bundles", audit.bundles, total)
            try:
                fetch_bundle(store, digest, cache, max_bytes=AUDIT_MAX_BYTES)
            except BundleUnavailable as exc:
                audit.problems.append(f"bundle {digest[:12]} (database copy): {exc.why}")
            audit.bundles += 1
    for digest, path in versions:
        progress("bundles", audit.bundles, total)
        folder = Path(path)
        if folder.is_dir() and tree_hash(folder) != digest:
            audit.problems.append(f"bundle {digest[:12]} (folder {folder}): does not hash to its name")
        audit.bundles += 1
    progress("bundles", audit.bundles, total)


def check_standings(store: Store, audit: StoreAudit, progress: Progress) -> None:
    with store.read() as s:
        names = list(s.scalars(select(Season.name).order_by(Season.id)))
    for i, name in enumerate(names):
        progress("standings", i, len(names))
        audit.problems += [f"season {name}: {p}" for p in verify_ratings(store, name)]
        audit.seasons += 1
    progress("standings", len(names), len(names))
