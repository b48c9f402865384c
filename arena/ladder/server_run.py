"""What a server plays, for as long as it runs: challenges within their share, then every running season.

`arena serve --workers N` plays through this `JobSource`. Queued challenges (unrated,
`kind="challenge"`) come first, but at most `challenge_slots(N)` of them at once while a season has
work: the ladder always keeps the other workers (docs/remote.md, "Challenges: limits and the
ladder's share"). Then it asks each running or closing season (a `SeasonRun` that plays until its
ratings are stable) for its next match, taking the seasons in turn; when none has one, challenges
fill the idle workers, any number of them. Every `refresh` seconds it
looks again: seasons started or closed remotely are picked up, bots submitted since are entered
in the running seasons (a stable season plays again when a new bot arrives), and matches whose
runner died go back to the queue. A closing season freezes once its final round robin is recorded.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from pathlib import Path

from sqlalchemy import select

from arena.ladder.record import record_result
from arena.ladder.runner import SeasonRun, fail_or_release, job_for, release_all
from arena.ladder.seasons import SeasonError, maybe_finish_close, sync_entries
from arena.store import MatchJob, MatchResult, Store
from arena.store.live_target import live_target
from arena.store.models import Entry, Season
from arena.store.queue import LEASE_SECONDS, claim, lease_owner, renew, requeue_abandoned

log = logging.getLogger("arena.players")

REFRESH = 2.0  # seconds between looks for seasons that started or closed, new bots and dead runners
CHALLENGE_SHARE = 4  # while a season has work, at most one worker in this many plays a challenge


def challenge_slots(workers: int) -> int:
    """How many of `workers` may play challenges at once while a season has work: a quarter (at
    least one), and never all of them; so none on a one-worker server, whose challenges wait for the
    seasons to run out of work (stable ratings, or none running)."""
    return min(workers - 1, max(1, workers // CHALLENGE_SHARE))


class ServerRun:
    """The server's `JobSource`: challenges within their share of `workers`, then running seasons,
    round robin, then challenges again in whatever the seasons leave idle. `workers` is how many
    matches the pool plays at once (`arena serve --workers`), which the challenges' share is of."""

    def __init__(
        self,
        store: Store,
        *,
        workers: int = 2,
        launcher: str = "bwrap",
        ttl: float = LEASE_SECONDS,
        live_dir: Path | None = None,
        refresh: float = REFRESH,
    ) -> None:
        self.store, self.launcher, self.ttl = store, launcher, ttl
        self.owner = lease_owner()
        self.live_dir = live_dir
        self.refresh = refresh
        self.seasons: dict[str, SeasonRun] = {}
        self._refreshed: float | None = None
        self._turn = 0
        self.suspended: list[str] = []
        self.challenge_slots = challenge_slots(workers)
        self.challenges: set[int] = set()  # match ids of the challenges handed out and not yet back

    def _refresh(self) -> None:
        now = time.monotonic()
        if self._refreshed is not None and now - self._refreshed < self.refresh:
            return
        self._refreshed = now
        with self.store.tx() as s:
            requeue_abandoned(s)
            live = {}
            for season in s.scalars(select(Season).where(Season.status.in_(("running", "closing")))):
                live[season.name] = season.status
                if season.status == "running":
                    before = _entered(s, season.id)
                    sync_entries(s, season)
                    if _entered(s, season.id) != before and season.name in self.seasons:
                        self.seasons[season.name]._stable = False  # a new bot: play until stable again
        for name in list(self.seasons):
            if name not in live:
                del self.seasons[name]
        for name in sorted(set(live) - set(self.seasons)):
            try:
                run = SeasonRun(self.store, name, until_stable=True, launcher=self.launcher, ttl=self.ttl)
            except SeasonError:  # frozen or deleted since the look above
                continue
            run.owner = self.owner  # one lease owner for everything this server plays
            self.seasons[name] = run
            log.info("playing season %s (%s)", name, live[name])

    def _live(self, job: MatchJob) -> MatchJob:
        """The job with where its live events go: the match's Redis stream when Redis is configured
        (`arena.store.live_target`), else its file in `live_dir`."""
        if self.live_dir is None:
            return job
        return replace(job, live=live_target(self.live_dir, job.match_id))

    def _challenge(self) -> MatchJob | None:
        with self.store.tx() as s:
            m = claim(s, self.owner, kinds=("challenge",), ttl=self.ttl)
            if m is None:
                return None
            job = job_for(s, m, self.launcher)
        self.challenges.add(job.match_id)
        return self._live(job)

    def next_job(self) -> MatchJob | None:
        self._refresh()
        if len(self.challenges) < self.challenge_slots:
            job = self._challenge()
            if job is not None:
                return job
        job = self._season_job()
        return job if job is not None else self._challenge()  # the seasons left a worker idle

    def _season_job(self) -> MatchJob | None:
        names = sorted(self.seasons)
        for i in range(len(names)):
            name = names[(self._turn + i) % len(names)]
            try:
                job = self.seasons[name].next_job()
            except Exception as exc:  # the season was frozen or deleted meanwhile: forget it (a refresh
                log.warning("season %s: %s", name, exc)  # brings it back if it still plays)
                self.seasons.pop(name, None)
                continue
            if job is not None:
                self._turn += 1
                return self._live(job)
            if maybe_finish_close(self.store, name):
                log.info("season %s: final round robin recorded; frozen", name)
                self.seasons.pop(name, None)
        return None

    def renew(self, match_ids: list[int]) -> None:
        with self.store.tx() as s:
            renew(s, self.owner, match_ids, ttl=self.ttl)

    def record(self, job: MatchJob, result: MatchResult) -> None:
        self.challenges.discard(job.match_id)
        outcome = record_result(self.store, self.owner, job.match_id, result)
        self.suspended += outcome.suspended
        for run in self.seasons.values():
            run._stable = False  # a result may change whether a season is stable

    def fail(self, job: MatchJob, error: str) -> None:
        self.challenges.discard(job.match_id)
        given_up = fail_or_release(self.store, self.owner, job.match_id, error)
        if given_up:
            log.warning("%s", given_up)

    def release(self, match_ids: list[int]) -> None:
        self.challenges.difference_update(match_ids)
        release_all(self.store, self.owner, match_ids)


def _entered(s, season_id: int) -> set[int]:  # noqa: ANN001
    return set(s.scalars(select(Entry.id).where(Entry.season_id == season_id, Entry.active.is_(True))))
