"""A season's job source for the worker pool: claims queued matches, asks matchmaking for more while
the run's goal is not met, renews leases, and records results.

Goals: `matches=N` plays until the season has N recorded ladder matches (so running the same command
again after an interruption continues where it stopped); `until_stable` plays until every active bot
is settled (`arena.ladder.settle`: past its provisional matches, and its place among its neighbours
known, or its interval at most `stable_ci` Elo), capped by `max_matches`. A closing season plays only its final round robin.
"""

from __future__ import annotations

import time

from sqlalchemy import func, select

from arena.ladder.record import record_result
from arena.ladder.seasons import SeasonError, no_pairing_reason, schedule
from arena.ladder.settle import STABLE_CI, matches_left, unsettled
from arena.ladder.standings import season_fit
from arena.ladder.tally import Unsaved, save, unsaved
from arena.store import MatchJob, MatchResult, Store
from arena.store.models import Bot, BotVersion, Entry, Match, Season, utcnow
from arena.store.queue import LEASE_SECONDS, claim, lease_owner, release, renew, requeue_abandoned, take
from arena.store.repo import unplayable_paths

MAX_ATTEMPTS = 3
MAX_FAILED = 25  # matches given up in one run before the run stops scheduling new ones
REQUEUE_EVERY = 15.0


def job_for(s, m: Match, launcher: str) -> MatchJob:
    """The job for a claimed match: its seed and salt (so the record carries the commitment the queue
    published), the REGISTERED name and version of each seat (never what the bundle calls itself), and
    the bundles that may no longer play (the worker stops their warm zygotes). Each seat's bundle is
    named by content hash (a worker fetches it from the store) and by stored path (the fast path on
    the server's machine)."""
    seats = {  # both seats' versions in one narrow query (a season claims one job per match)
        vid: (path, digest, name, number)
        for vid, path, digest, name, number in s.execute(
            select(BotVersion.id, BotVersion.path, BotVersion.content_hash, Bot.name, BotVersion.number)
            .join(Bot, BotVersion.bot_id == Bot.id)
            .where(BotVersion.id.in_((m.version0_id, m.version1_id)))
        ).all()
    }
    (path0, hash0, name0, number0), (path1, hash1, name1, number1) = (
        seats[m.version0_id],
        seats[m.version1_id],
    )
    return MatchJob(
        match_id=m.id,
        bundles=(path0, path1),
        hashes=(hash0, hash1),
        request_id=m.request_id or "",
        rules=tuple(m.rules),
        seed=m.seed,
        time_control=dict(m.time_control),
        launcher=launcher,
        salt=m.salt,
        names=((name0, str(number0)), (name1, str(number1))),
        attempt=m.attempts or 0,
        retired=unplayable_paths(s),
    )


class SeasonRun:
    """The `JobSource` for `arena season run` and `arena season close`."""

    def __init__(
        self,
        store: Store,
        name: str,
        *,
        matches: int | None = None,
        until_stable: bool = False,
        stable_ci: float = STABLE_CI,
        max_matches: int = 2000,
        launcher: str = "bwrap",
        ttl: float = LEASE_SECONDS,
    ) -> None:
        self.store, self.name, self.launcher, self.ttl = store, name, launcher, ttl
        self.matches, self.until_stable = matches, until_stable
        self.stable_ci, self.max_matches = stable_ci, max_matches
        self.owner = lease_owner()
        self.suspended: list[str] = []
        self.errors: list[str] = []
        self._stable = False
        self.blocked: str | None = None  # why matchmaking could not pair anyone (the run then stops)
        self.unstable: list[tuple[str, str]] = []  # (bot, why) at the last --until-stable check
        self.settled: tuple[int, int] | None = None  # (settled, active) bots at that check
        self.matches_left = 0  # and the estimate of the matches still needed
        self._last_requeue = 0.0
        self._pending: Unsaved | None = None  # a tally to save once next_job's transaction is over
        with store.tx() as s:
            season = s.scalar(select(Season).where(Season.name == name))
            if season is None:
                raise SeasonError(f"no season named {name!r}; create it with `arena season create {name}`")
            if season.status not in ("running", "closing"):
                hint = f"`arena season start {name}`" if season.status == "draft" else "it is frozen"
                raise SeasonError(f"season {name!r} is {season.status}; cannot play ({hint})")
            if season.paused:
                raise SeasonError(
                    f"season {name!r} is paused by the organiser; `arena season resume {name}` first"
                )
            self.season_id = season.id

    # -- JobSource -------------------------------------------------------------------------------
    def next_job(self) -> MatchJob | None:
        """The next match to play (claimed, or paired and claimed); after its transaction, the season's
        tally and fit as the pairing left them are saved when due (`arena.ladder.tally.save`), so that
        the standings of a new process start from the matchmaking's fit as well as from a reader's."""
        self._pending = None
        job = self._next_job()
        save(self.store.engine, self._pending)
        return job

    def _next_job(self) -> MatchJob | None:
        with self.store.tx() as s:
            if time.monotonic() - self._last_requeue > REQUEUE_EVERY:
                requeue_abandoned(s)
                self._last_requeue = time.monotonic()
            season = s.get_one(Season, self.season_id, with_for_update=True)
            if season.paused:  # the organiser paused it: nothing starts; what runs finishes
                return None
            if season.status == "closing":
                m = claim(s, self.owner, season_id=season.id, kinds=("final",), ttl=self.ttl)
            elif season.status == "running":
                # the recorded counter, not a count of the season's history: while a season runs,
                # every match it records is a ladder match (finals come with closing)
                done = season.recorded or 0
                queued, running = self._open_ladder_counts(s)
                # nothing queued: no claim to try (its queries were a fifth of a pairing's cost)
                m = (
                    claim(s, self.owner, season_id=season.id, kinds=("ladder",), ttl=self.ttl)
                    if queued
                    else None
                )
                if m is None and self._want_more(s, season, done, queued + running):
                    created = schedule(s, season, 1)
                    self._pending = unsaved(s, season)  # never saved inside this transaction
                    if created:  # the oldest match `claim` could take now is the first one just queued
                        m = take(s, self.owner, created[0], ttl=self.ttl)
                    elif queued + running == 0:
                        self.blocked = no_pairing_reason(s, season)
            else:
                return None
            return job_for(s, m, self.launcher) if m is not None else None

    def waiting(self) -> bool:
        """Whether the run is short of its goal while matches of the season are held by other
        runners' leases (another runner's, or one that died with its host): the pool then waits for
        them to finish, or for a dead runner's leases to run out and `next_job` to requeue and claim
        them, instead of ending the run short of `--matches` (a restarted runner on another host
        would otherwise stop at once, its goal counted in matches nobody plays)."""
        with self.store.tx() as s:
            season = s.get_one(Season, self.season_id)
            if season.status not in ("running", "closing") or season.paused:
                return False
            if (
                self.matches is not None
                and season.status == "running"
                and (season.recorded or 0) >= self.matches
            ):
                return False
            held = select(Match.id).where(
                Match.status == "running", Match.season_id == self.season_id, Match.lease_owner != self.owner
            )
            return s.scalar(select(held.exists())) or False

    def renew(self, match_ids: list[int]) -> None:
        with self.store.tx() as s:
            renew(s, self.owner, match_ids, ttl=self.ttl)

    def record(self, job: MatchJob, result: MatchResult) -> None:
        outcome = record_result(self.store, self.owner, job.match_id, result)
        self.suspended += outcome.suspended
        self._stable = False

    def fail(self, job: MatchJob, error: str) -> None:
        given_up = fail_or_release(self.store, self.owner, job.match_id, error)
        if given_up:
            self.errors.append(given_up)

    def release(self, match_ids: list[int]) -> None:
        release_all(self.store, self.owner, match_ids)

    # -- goals -----------------------------------------------------------------------------------
    def counts(self) -> tuple[int, int]:
        """(recorded ladder matches, open ladder matches) of the season."""
        with self.store.tx() as s:
            return self._counts(s)

    def _counts(self, s) -> tuple[int, int]:
        done, queued, running = self._ladder_counts(s)
        return done, queued + running

    def _ladder_counts(self, s) -> tuple[int, int, int]:
        """(done, queued, running) ladder matches of the season, in one query over its history: for
        the start and end of a run only (each claim counts the open ones, `_open_ladder_counts`)."""
        by_status = dict(
            s.execute(
                select(Match.status, func.count())
                .where(Match.season_id == self.season_id, Match.kind == "ladder")
                .group_by(Match.status)
            ).all()
        )
        return by_status.get("done", 0), by_status.get("queued", 0), by_status.get("running", 0)

    def _open_ladder_counts(self, s) -> tuple[int, int]:
        """(queued, running) ladder matches of the season: the open matches only, found by
        `ix_matches_claim` (status first), however many the season has recorded."""
        by_status = dict(
            s.execute(
                select(Match.status, func.count())
                .where(
                    Match.status.in_(("queued", "running")),
                    Match.season_id == self.season_id,
                    Match.kind == "ladder",
                )
                .group_by(Match.status)
            ).all()
        )
        return by_status.get("queued", 0), by_status.get("running", 0)

    def _want_more(self, s, season: Season, done: int, open_: int) -> bool:
        if len(self.errors) >= MAX_FAILED:  # the executor is broken, not the bots: stop, say so
            return False
        if self.matches is not None:
            return done + open_ < self.matches
        if self.until_stable:
            return done + open_ < self.max_matches and not self.is_stable(s, season)
        return False

    def is_stable(self, s, season: Season) -> bool:
        """Every active bot settled (`arena.ladder.settle`: past provisional, and its interval within
        stable_ci or its place among its neighbours known). `self.unstable` keeps who is not, and why;
        `self.matches_left` the estimate of the matches that takes."""
        if self._stable:
            return True
        entries, fit = season_fit(s, season)
        active = [i for i, e in enumerate(entries) if e.active]
        if len(active) < 2:
            self._stable, self.unstable, self.matches_left = True, [], 0
            return True
        left = unsettled(fit, active, [entries[i].rated for i in active], self.stable_ci)
        self.unstable = [(entries[u.index].version.label, u.why) for u in left]
        self.matches_left = matches_left(left)
        self.settled = len(active) - len(left), len(active)
        self._stable = not self.unstable
        return self._stable

    def check_stable(self) -> bool:
        """A fresh stability check (at the end of a run: did it converge, and if not, who kept it)."""
        self._stable = False
        with self.store.read() as s:
            return self.is_stable(s, s.get_one(Season, self.season_id))

    def status_line(self) -> str:
        """For the progress bar, short: how many bots are settled, and the first one that is not."""
        if not self.until_stable or self.settled is None:
            return ""
        done, of = self.settled
        first = f" {self.unstable[0][0]} {self.unstable[0][1]}" if self.unstable else ""
        return f"settled {done}/{of}{first}"

    def target(self) -> int | None:
        """The number of recorded ladder matches this run aims at, when known (for the ETA): with
        --until-stable, those recorded and open plus the estimate of those still needed, at most
        max_matches."""
        if self.until_stable and self.settled is not None:
            done, open_ = self.counts()
            return min(done + open_ + self.matches_left, self.max_matches)
        return self.matches


def fail_or_release(store: Store, owner: str, match_id: int, error: str) -> str | None:
    """A job raised instead of playing: back to the queue, or given up (visibly) after MAX_ATTEMPTS.
    Returns the line that says so when it was given up."""
    with store.tx() as s:
        m = s.get(Match, match_id)
        if m is None or m.lease_owner != owner:
            return None
        if m.attempts < MAX_ATTEMPTS:
            release(s, owner, m.id)
            return None
        m.status, m.lease_owner, m.lease_expires = "failed", None, None
        m.finished_at = utcnow()  # its deck-mate may start now; its start and end stay on record
        m.verdict_details = [error, error]
        return f"match {m.id} failed {m.attempts} times: {error}"


def release_all(store: Store, owner: str, match_ids: list[int]) -> None:
    """Put claimed matches back in the queue (an interrupted run, or lost with another job's worker),
    giving back the attempt their claim counted: it was no fault of theirs, so it must not bring
    them nearer to being given up (`fail_or_release` keeps the attempt: there the job failed)."""
    if not match_ids:
        return
    with store.tx() as s:
        for m in s.scalars(select(Match).where(Match.id.in_(match_ids)).with_for_update()):
            if m.status == "running" and m.lease_owner == owner:
                m.attempts = max(m.attempts - 1, 0)
        s.flush()
        for match_id in match_ids:
            release(s, owner, match_id)


def active_entries(store: Store, name: str) -> int:
    with store.tx() as s:
        season = s.scalar(select(Season).where(Season.name == name))
        if season is None:
            raise SeasonError(f"no season named {name!r}; `arena season list` shows them")
        return (
            s.scalar(
                select(func.count())
                .select_from(Entry)
                .where(Entry.season_id == season.id, Entry.active.is_(True))
            )
            or 0
        )
