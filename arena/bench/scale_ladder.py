"""The ladder's steps against a big store, as `arena season run` and `arena serve --workers` take
them: claim the next queued match, pair (queue a new duplicate pair by matchmaking), record a result
with its replay and rating changes, and refit the season as the matchmaking does
(`arena.ladder.pairing_fit.store_pairing_fit`: the results recorded since the last fit read from the
tally, taken in by the incremental refit, and the entries' pairing ratings written; the first run of
a process starts from the saved tally, or the whole season, and fits it whole).

Each step runs in this process, as the season runner's parent does, `reps` times; the statements of
the last run are counted. The steps write: every run of the bench claims and records `reps` matches
and queues `reps` new pairs in the kept store (a few rows among thousands or millions).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from arena.bench.scale_ops import Kind, Statements
from arena.bench.scale_replays import replay_pool
from arena.bench.scale_rows import SEASON
from arena.ladder.pairing_fit import store_pairing_fit
from arena.ladder.record import record_result
from arena.ladder.seasons import schedule
from arena.store import MatchResult, Store
from arena.store.models import Season
from arena.store.queue import claim, lease_owner

STEPS = ("pair", "claim", "record", "refit")


def ladder_steps(url: str, home: str, reps: int, statements: Statements) -> list[dict[str, Any]]:
    """One row per step: median milliseconds over `reps` runs, statements of the last, and errors."""
    store = Store.open(url, home=home)
    owner = lease_owner()
    claimed: list[int] = []
    try:
        with store.read() as s:
            season = s.scalar(select(Season).where(Season.name == SEASON))
            assert season is not None, "a bench store has its season"
            season_id, rules = season.id, list(season.rules)
        record = replay_pool(rules, 1, 7)
        won = next(r for bucket in record.values() for r in bucket)

        def take() -> None:
            with store.tx() as s:
                s.get_one(Season, season_id, with_for_update=True)
                m = claim(s, owner, season_id=season_id, kinds=("ladder",))
                if m is not None:
                    claimed.append(m.id)

        def pair() -> None:
            with store.tx() as s:
                schedule(s, s.get_one(Season, season_id, with_for_update=True), 1)

        def put() -> None:
            if not claimed:
                return
            result = MatchResult(winner=0, void=False, verdicts=("OK", "OK"), lines=won.lines,
                                 deals_played=won.deals, replay=won.data, duration=1.0)  # fmt: skip
            record_result(store, owner, claimed.pop(0), result)

        def refit() -> None:  # the matchmaking's refit, as a pairing makes it when due
            with store.tx() as s:
                store_pairing_fit(s, s.get_one(Season, season_id, with_for_update=True))

        steps: dict[str, Callable[[], None]] = {"pair": pair, "claim": take, "record": put, "refit": refit}
        timings: dict[str, _Timing] = {name: _Timing() for name in STEPS}
        for i in range(reps):  # a runner's cycle: pair, claim the oldest queued match, record it
            for name in STEPS:
                timings[name].run(steps[name], statements if i == reps - 1 else None)
        return [timings[name].row(name) for name in STEPS]
    finally:
        store.close()


class _Timing:
    """One step's runs: milliseconds, the statements of the counted run, the first error."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.statements: int | None = None
        self.error = ""

    def run(self, step: Callable[[], None], statements: Statements | None) -> None:
        if self.error:
            return
        started = time.perf_counter()
        try:
            if statements is None:
                step()
            else:
                with statements.counting() as n:
                    step()
                self.statements = n[0]
        except Exception as exc:  # a step that breaks on a big store is a figure too
            text = str(exc).splitlines()
            self.error = f"{type(exc).__name__}: {text[0][:200] if text else ''}"
            return
        self.times.append((time.perf_counter() - started) * 1000)

    def row(self, name: str) -> dict[str, Any]:
        median = round(statistics.median(self.times), 2) if self.times else None
        return {"op": f"ladder {name}", "kind": Kind.LADDER.value, "median_ms": median, "reps": len(self.times),
                "statements": self.statements, "bytes": None, "rss_mib": None, "error": self.error}  # fmt: skip
