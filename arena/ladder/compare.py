"""`arena compare A B`: duplicate pairs between two bot versions until the SPRT decides.

Each pair is two matches with the same seed and the seats swapped. The pair's score for A (0, ¼,
½, ¾, 1) is one pentanomial observation; a pair with a void match is not counted. Compare matches
are stored with their replays (kind "compare", no season) but change no rating.

Pair seeds come from the CSPRNG, like a season's, unless the user gives `--seed`: then they are
derived from it (the user chose the decks, as with `arena play --seed`). Either way each match
gets its own salt and deck commitment, and the twins of a pair never run at once (the queue's
rule), so keeping `2 * parallel_pairs` matches busy takes that many pairs open.
"""

from __future__ import annotations

from sqlalchemy import delete

from arena.ladder.record import record_result
from arena.ladder.runner import job_for
from arena.ladder.seasons import derive_seed
from arena.ladder.sprt import Sprt
from arena.store import MatchJob, MatchResult, Store
from arena.store.decks import commit_decks, new_seed
from arena.store.models import BotVersion, Match
from arena.store.queue import LEASE_SECONDS, claim, lease_owner, release, renew

MAX_PAIRS = 2000  # the default limit: long enough that a test at elo1 reaches its nominal power


class CompareRun:
    """The `JobSource` for a compare: schedules pairs while the SPRT is undecided."""

    def __init__(
        self,
        store: Store,
        a: BotVersion,
        b: BotVersion,
        *,
        rules: list[str],
        time_control: dict,
        sprt: Sprt,
        max_pairs: int = MAX_PAIRS,
        seed: int | None = None,
        launcher: str = "bwrap",
        parallel_pairs: int = 1,
    ) -> None:
        self.parallel_pairs = parallel_pairs
        self.store, self.a, self.b, self.sprt = store, a, b, sprt
        self.rules, self.time_control, self.max_pairs, self.launcher = (
            rules,
            time_control,
            max_pairs,
            launcher,
        )
        self.seed = seed  # None: every pair seed from the CSPRNG
        sprt.max_n = max_pairs
        self.owner = lease_owner()
        self.pairs_started = 0
        self.match_ids: list[int] = []
        self.results: dict[int, dict[int, float | None]] = {}  # pair -> match id -> A's score
        self.voided_pairs = 0

    def next_job(self) -> MatchJob | None:
        with self.store.tx() as s:
            m = claim(s, self.owner, ids=self.match_ids, ttl=LEASE_SECONDS)
            if (
                m is None
                and self.sprt.state().verdict is None
                and self.pairs_started < self.max_pairs
                and self._open_pairs() < 2 * self.parallel_pairs
            ):
                self._queue_pair(s)
                m = claim(s, self.owner, ids=self.match_ids, ttl=LEASE_SECONDS)
            return job_for(s, m, self.launcher) if m is not None else None

    def _open_pairs(self) -> int:
        """Pairs queued and not yet fully recorded (a twin waits while its partner plays)."""
        return self.pairs_started - sum(len(v) == 2 for v in self.results.values())

    def _queue_pair(self, s) -> None:
        seed = new_seed() if self.seed is None else derive_seed(self.seed, self.pairs_started)
        for x, y in ((self.a, self.b), (self.b, self.a)):
            m = Match(
                season_id=None,
                kind="compare",
                pair=self.pairs_started,
                version0_id=x.id,
                version1_id=y.id,
                rules=list(self.rules),
                time_control=dict(self.time_control),
                seed=seed,
            )
            s.add(m)
            commit_decks(s, m)
            self.match_ids.append(m.id)
        self.pairs_started += 1

    def record(self, job: MatchJob, result: MatchResult) -> None:
        if not record_result(self.store, self.owner, job.match_id, result).recorded:
            return  # the lease was lost: whoever holds the match now records it
        m = self.store.match(job.match_id)
        score0 = result.score0
        score_a = None if score0 is None else (score0 if m.version0_id == self.a.id else 1.0 - score0)
        assert m.pair is not None  # every compare match is one of a pair (start_pair)
        pair = self.results.setdefault(m.pair, {})
        pair[m.id] = score_a
        if len(pair) == 2:
            first, second = pair.values()
            if first is None or second is None:
                self.voided_pairs += 1
            else:  # after the verdict froze this still counts, but cannot change it
                self.sprt.add((first + second) / 2, games=(first, second))

    def renew(self, match_ids: list[int]) -> None:
        with self.store.tx() as s:
            renew(s, self.owner, match_ids)

    def fail(self, job: MatchJob, error: str) -> None:
        self.release([job.match_id])

    def release(self, match_ids: list[int]) -> None:
        with self.store.tx() as s:
            for match_id in match_ids:
                release(s, self.owner, match_id)

    def cleanup(self) -> None:
        """Drop this compare's matches that never finished (a compare is not resumable)."""
        with self.store.tx() as s:
            s.execute(delete(Match).where(Match.id.in_(self.match_ids), Match.status != "done"))
