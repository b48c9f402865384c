"""What a server plays, for as long as it runs: challenges in slots of their own, then every running season.

`arena serve --workers N` plays through this `JobSource`, on a pool of `pool_size(N)` =
N + `challenge_slots(N)` places. The ladder's matches take at most N of them: queued challenges
(unrated, `kind="challenge"`) have `challenge_slots(N)` places of their own beyond the N, so a
challenge, however long and however slow its bots, never takes a ladder worker while a season has
work (docs/remote.md, "Challenges: limits and the ladder's share"). It asks each running or closing
season (a `SeasonRun` that plays until its ratings are stable) for its next match, taking the
seasons in turn; when none has one, challenges fill the idle ladder workers too. Every `refresh`
seconds it looks again: seasons started or closed remotely are picked up, bots submitted since are
entered in the running seasons (a stable season plays again when a new bot arrives), and matches
whose runner died go back to the queue. A closing season freezes once its final round robin is
recorded. A season the organiser paused is left out until resumed, and while the organiser drains
this worker (`arena.store.drains`, by its lease name or host) it hands out no job: the matches in
flight finish and are recorded (docs/deploy.md, "The organiser's controls").
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
from arena.ladder.settle import STABLE_CI
from arena.store import MatchJob, MatchResult, Store
from arena.store.drains import drained_by
from arena.store.live_target import live_target
from arena.store.models import Entry, Season
from arena.store.queue import LEASE_SECONDS, claim, lease_owner, renew, requeue_abandoned

log = logging.getLogger("arena.players")

REFRESH = 2.0  # seconds between looks for seasons that started or closed, new bots and dead runners
CHALLENGE_POLL = (
    0.5  # seconds after finding no queued challenge before claiming one again (at most `refresh`)
)
CHALLENGE_SHARE = 4  # challenges get one place of their own per this many ladder workers (at least one)


def challenge_slots(workers: int) -> int:
    """The places challenges have beyond the ladder's `workers`: a quarter as many, at least one (one
    for 1 to 7 workers, two for 8, four for 16). A challenge in one of them takes no ladder worker;
    its bots share the machine with the ladder's at the players' priority."""
    return max(1, workers // CHALLENGE_SHARE)


def pool_size(workers: int) -> int:
    """Matches a server with `--workers` = `workers` plays at once at most: the ladder's, and the
    challenges' own places."""
    return workers + challenge_slots(workers)


class ServerRun:
    """The server's `JobSource`: challenges in their own places, then running seasons, round robin,
    on at most `workers` places (`arena serve --workers`), then challenges again in whatever ladder
    places the seasons leave idle. Its pool plays `pool_size(workers)` matches at once."""

    def __init__(
        self,
        store: Store,
        *,
        workers: int = 2,
        launcher: str = "bwrap",
        ttl: float = LEASE_SECONDS,
        live_dir: Path | None = None,
        refresh: float = REFRESH,
        stable_ci: float = STABLE_CI,
    ) -> None:
        self.store, self.launcher, self.ttl = store, launcher, ttl
        self.stable_ci = stable_ci  # each season plays until settled at this target (`--stable-ci`)
        self.owner = lease_owner()
        self.live_dir = live_dir
        self.refresh = refresh
        self.seasons: dict[str, SeasonRun] = {}
        self._refreshed: float | None = None
        self._turn = 0
        self.suspended: list[str] = []
        self.workers = workers
        self.challenge_slots = challenge_slots(workers)
        self.slots = pool_size(workers)  # what the pool that plays this source should be sized to
        self.challenges: set[int] = set()  # match ids of the challenges handed out and not yet back
        self.ladder: set[int] = set()  # match ids of the seasons' jobs handed out and not yet back
        self._no_challenge: float | None = None  # when a claim last found none queued
        self.draining = False  # the organiser drains this worker: it takes no new match

    def _refresh(self) -> None:
        now = time.monotonic()
        if self._refreshed is not None and now - self._refreshed < self.refresh:
            return
        self._refreshed = now
        with self.store.tx() as s:
            requeue_abandoned(s)
            live = {}
            self._drain(s)
            playing = select(Season).where(
                Season.status.in_(("running", "closing")), Season.paused.is_(False)
            )
            for season in s.scalars(playing):
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
                run = SeasonRun(
                    self.store,
                    name,
                    until_stable=True,
                    stable_ci=self.stable_ci,
                    launcher=self.launcher,
                    ttl=self.ttl,
                )
            except SeasonError:  # frozen or deleted since the look above
                continue
            run.owner = self.owner  # one lease owner for everything this server plays
            self.seasons[name] = run
            log.info("playing season %s (%s)", name, live[name])

    def _drain(self, s) -> None:
        """Look whether the organiser drains this worker (`arena.store.drains`): while drained it
        finishes the matches it holds and takes no new one."""
        drain = drained_by(s, self.owner)
        if (drain is not None) != self.draining:
            self.draining = drain is not None
            if drain is not None:
                log.info(
                    "draining (%s): finishing %d matches, taking no new one",
                    drain.name,
                    len(self.ladder) + len(self.challenges),
                )
            else:
                log.info("drain lifted: taking matches again")

    def _live(self, job: MatchJob) -> MatchJob:
        """The job with where its live events go: the match's Redis stream when Redis is configured
        (`arena.store.live_target`), else its file in `live_dir`."""
        if self.live_dir is None:
            return job
        return replace(job, live=live_target(self.live_dir, job.match_id))

    def _challenge(self) -> MatchJob | None:
        """The next queued challenge, claimed; None when none is queued. A claim is a write
        transaction: after one that found none, the next waits `CHALLENGE_POLL` (or `refresh`, if
        shorter), since the pool asks again for every free place each time a match ends."""
        now = time.monotonic()
        if self._no_challenge is not None and now - self._no_challenge < min(CHALLENGE_POLL, self.refresh):
            return None
        with self.store.tx() as s:
            m = claim(s, self.owner, kinds=("challenge",), ttl=self.ttl)
            if m is None:
                self._no_challenge = now
                return None
            job = job_for(s, m, self.launcher)
        self._no_challenge = None
        self.challenges.add(job.match_id)
        return self._live(job)

    def next_job(self) -> MatchJob | None:
        self._refresh()
        if self.draining:
            return None
        if len(self.challenges) < self.challenge_slots:  # a challenges' own place is free
            job = self._challenge()
            if job is not None:
                return job
        in_ladder_places = len(self.ladder) + max(0, len(self.challenges) - self.challenge_slots)
        if in_ladder_places >= self.workers:
            return None  # every ladder worker is busy: a challenge waits for a place of its own
        job = self._season_job()
        if job is not None:
            self.ladder.add(job.match_id)
            return job
        return self._challenge()  # the seasons left a ladder worker idle

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

    def _back(self, match_ids: list[int]) -> None:
        self.challenges.difference_update(match_ids)
        self.ladder.difference_update(match_ids)

    def record(self, job: MatchJob, result: MatchResult) -> None:
        self._back([job.match_id])
        outcome = record_result(self.store, self.owner, job.match_id, result)
        self.suspended += outcome.suspended
        for run in self.seasons.values():
            run._stable = False  # a result may change whether a season is stable

    def fail(self, job: MatchJob, error: str) -> None:
        self._back([job.match_id])
        given_up = fail_or_release(self.store, self.owner, job.match_id, error)
        if given_up:
            log.warning("%s", given_up)

    def release(self, match_ids: list[int]) -> None:
        self._back(match_ids)
        release_all(self.store, self.owner, match_ids)


def _entered(s, season_id: int) -> set[int]:
    return set(s.scalars(select(Entry.id).where(Entry.season_id == season_id, Entry.active.is_(True))))
