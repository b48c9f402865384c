"""A real duplicate season at concurrency 2, on SQLite and PostgreSQL: the sample bots in the sandbox,
played by the worker pool's child processes through the real referee.

The store's start and end times show that no two matches with the same decks overlapped while
matches of different pairs did run side by side; twins share a seed and different pairs do not;
every match carries its own salt and a deck commitment to its seed, id and salt.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from sqlalchemy import select

from arena.engine import check_commitment, deck_commitment
from arena.ladder.runner import SeasonRun, job_for
from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.store.models import BotVersion, Match
from arena.workers.execute import bwrap_available, run_job
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
MATCHES = 12  # six duplicate pairs


def _overlap(a: Match, b: Match) -> bool:
    return a.started_at < b.finished_at and b.started_at < a.finished_at


def test_a_duplicate_season_never_runs_twins_at_once(store: Store) -> None:
    launcher = "bwrap" if bwrap_available() else "local"
    for name, owner in (("random", "ann"), ("greedy", "bob"), ("tactician", "cat")):
        submit_bundle(store, SAMPLES / name, name=name, owner=owner, launcher=launcher)
    create_season(store, "twins", rules=["flags=1"], duplicate=True, time_control={"move": 2.0, "bank": 20.0})
    start_season(store, "twins")
    source = SeasonRun(store, "twins", launcher=launcher, matches=MATCHES)
    progress = run_pool(source, run_job, concurrency=2)  # spawned child processes, the real referee
    assert progress.done == MATCHES and progress.failed == 0

    with store.tx() as s:
        matches = list(s.scalars(select(Match).order_by(Match.id)))
        jobs = {m.id: job_for(s, m, launcher) for m in matches}
        registered = {
            m.id: tuple(
                (v.bot.name, str(v.number))
                for v in (s.get(BotVersion, m.version0_id), s.get(BotVersion, m.version1_id))
            )
            for m in matches
        }
    assert len(matches) == MATCHES and {m.status for m in matches} == {"done"}
    assert all(m.started_at is not None and m.finished_at is not None for m in matches)

    by_pair: dict[int, list[Match]] = defaultdict(list)
    by_seed: dict[int, list[Match]] = defaultdict(list)
    for m in matches:
        by_pair[m.pair].append(m)
        by_seed[m.seed].append(m)
    assert all(len(twins) == 2 for twins in by_pair.values())
    assert all(a.seed == b.seed for a, b in by_pair.values())  # twins hold the same decks
    assert len(by_seed) == len(by_pair)  # and no two pairs do
    for a, b in by_seed.values():
        assert not _overlap(a, b), (a.id, b.id, a.started_at, a.finished_at, b.started_at, b.finished_at)
    # the run did play two matches at once (of different pairs), so the check above could fail
    assert any(_overlap(a, b) for a in matches for b in matches if a.seed != b.seed)

    salts = [m.salt for m in matches]
    assert len(set(salts)) == MATCHES and all(len(bytes.fromhex(x)) == 16 for x in salts)
    for m in matches:
        assert m.commitment == deck_commitment(m.seed, f"m{m.id}", bytes.fromhex(m.salt))
        assert check_commitment(m.commitment, m.seed, f"m{m.id}", bytes.fromhex(m.salt))
        assert not check_commitment(m.commitment, m.seed ^ 1, f"m{m.id}", bytes.fromhex(m.salt))
        job = jobs[m.id]  # what a worker is handed: the stored salt and the REGISTERED names
        assert job.salt == m.salt and job.seed == m.seed
        assert job.names == registered[m.id] and job.names[0][1] == "1"
