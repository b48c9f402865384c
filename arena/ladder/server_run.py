"""What a server plays, for as long as it runs: challenges first, then every running season.

`arena serve --workers N` plays through this `JobSource`: it claims queued challenges (unrated,
`kind="challenge"`), then asks each running or closing season (a `SeasonRun` that plays until its
ratings are stable) for its next match. Seasons started or closed remotely are picked up within
`REFRESH` seconds; a closing season freezes once its final round robin is recorded.
"""

from __future__ import annotations

import time
from pathlib import Path

from sqlalchemy import select

from arena.ladder.record import record_result
from arena.ladder.runner import SeasonRun, job_for
from arena.ladder.seasons import maybe_finish_close
from arena.store import MatchJob, MatchResult, Store
from arena.store.models import Match, Season
from arena.store.queue import LEASE_SECONDS, claim, lease_owner, release, renew

REFRESH = 2.0  # seconds between looks for seasons that started or closed


class ServerRun:
    """The server's `JobSource`: challenges, then running seasons, round robin."""

    def __init__(self, store: Store, *, launcher: str = "bwrap", ttl: float = LEASE_SECONDS,
                 live_dir: Path | None = None) -> None:  # fmt: skip
        self.store, self.launcher, self.ttl = store, launcher, ttl
        self.owner = lease_owner()
        self.live_dir = live_dir
        self.seasons: dict[str, SeasonRun] = {}
        self._refreshed = 0.0
        self._turn = 0
        self.suspended: list[str] = []

    def _refresh(self) -> None:
        if time.monotonic() - self._refreshed < REFRESH:
            return
        self._refreshed = time.monotonic()
        with self.store.read() as s:
            live = {
                name
                for (name,) in s.execute(select(Season.name).where(Season.status.in_(("running", "closing"))))
            }
        for name in list(self.seasons):
            if name not in live:
                del self.seasons[name]
        for name in live - set(self.seasons):
            self.seasons[name] = SeasonRun(
                self.store, name, until_stable=True, launcher=self.launcher, ttl=self.ttl
            )
            self.seasons[name].owner = self.owner  # one lease owner for everything this server plays

    def _live(self, job: MatchJob) -> MatchJob:
        if self.live_dir is None:
            return job
        from dataclasses import replace

        return replace(job, live=str(self.live_dir / f"m{job.match_id}.jsonl"))

    def next_job(self) -> MatchJob | None:
        with self.store.tx() as s:
            m = claim(s, self.owner, kinds=("challenge",), ttl=self.ttl)
            if m is not None:
                return self._live(job_for(s, m, self.launcher))
        self._refresh()
        names = sorted(self.seasons)
        for i in range(len(names)):
            name = names[(self._turn + i) % len(names)]
            try:
                job = self.seasons[name].next_job()
            except Exception:  # the season was frozen or deleted meanwhile: forget it
                self.seasons.pop(name, None)
                continue
            if job is not None:
                self._turn += 1
                return self._live(job)
            maybe_finish_close(self.store, name)
        return None

    def renew(self, match_ids: list[int]) -> None:
        with self.store.tx() as s:
            renew(s, self.owner, match_ids, ttl=self.ttl)

    def record(self, job: MatchJob, result: MatchResult) -> None:
        outcome = record_result(self.store, self.owner, job.match_id, result)
        self.suspended += outcome.suspended
        for run in self.seasons.values():
            run._stable = False  # a result may change whether a season is stable

    def fail(self, job: MatchJob, error: str) -> None:
        from arena.ladder.runner import MAX_ATTEMPTS

        with self.store.tx() as s:
            m = s.get(Match, job.match_id)
            if m is None or m.lease_owner != self.owner:
                return
            if m.attempts >= MAX_ATTEMPTS:
                m.status, m.lease_owner, m.lease_expires = "failed", None, None
                m.verdict_details = [error, error]
            else:
                release(s, self.owner, m.id)

    def release(self, match_ids: list[int]) -> None:
        with self.store.tx() as s:
            for match_id in match_ids:
                release(s, self.owner, match_id)
