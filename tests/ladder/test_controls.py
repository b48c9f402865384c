"""The organiser's controls on a real season (arena.ladder.controls, arena.store.drains), on both
databases: a void takes a result out and `arena season verify` agrees with the ratings it leaves;
a recompute repairs damaged ratings and is a no-op on sound ones; a paused season starts nothing;
failed matches go back to the queue; a drained server worker takes no new match."""

from __future__ import annotations

import engine_play
import pytest
from sqlalchemy import select

from arena.ladder.controls import pause_season, recompute_ratings, requeue_failed, void_match
from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import SeasonError, create_season, start_season
from arena.ladder.server_run import ServerRun
from arena.ladder.standings import standings, verify_ratings
from arena.store import Store, drains
from arena.store.audit import recent_actions
from arena.store.models import BotTally, Entry, Match, RatingChange
from arena.store.tallies import recount
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

WHO = "test:admin@127.0.0.1"


def _season(store: Store, tmp_path, matches: int = 6) -> None:
    for name, owner, strategy in (("a", "1", "high"), ("b", "2", "low"), ("c", "3", "random")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner
        )
    create_season(store, "s", seed=5)
    start_season(store, "s")
    run_pool(
        SeasonRun(store, "s", launcher="local", matches=matches),
        engine_play.play,
        concurrency=1,
        threads=True,
    )


def _tallies(store: Store) -> list[tuple]:
    with store.read() as s:
        return sorted(
            (t.bot_id, t.opponent_id, t.verdict, t.matches, t.wins, t.draws, t.losses)
            for t in s.scalars(select(BotTally))
        )


def test_void_undoes_a_result_and_verify_agrees(store: Store, tmp_path) -> None:
    _season(store, tmp_path)
    with store.read() as s:
        done = list(s.scalars(select(Match).where(Match.status == "done").order_by(Match.record_seq)))
        first = done[0]
        decisive = next(m for m in done if m.winner is not None)
        before = {e.id: (e.rating, e.wins, e.draws, e.losses) for e in s.scalars(select(Entry))}
    assert len(done) == 6
    _, rows_before = standings(store, "s")  # fills this process's caches: the void must refresh them

    voided = void_match(store, decisive.id, "the seat-1 bot read the deck from a side channel", WHO)
    assert voided.void and voided.void_reason.startswith("the seat-1 bot")
    assert verify_ratings(store, "s") == []  # the audit replays the remaining results to the same ratings
    with store.read() as s:
        assert not list(s.scalars(select(RatingChange).where(RatingChange.match_id == decisive.id)))
        after = {e.id: (e.rating, e.wins, e.draws, e.losses) for e in s.scalars(select(Entry))}
        e0 = s.get_one(Entry, decisive.entry0_id)
        e1 = s.get_one(Entry, decisive.entry1_id)
        assert e0.voids == 1 and e1.voids == 1
    assert after != before
    games = sum(w + d + lo for _, w, d, lo in after.values())
    assert games == 2 * 5  # five results count, one per seat
    _, rows = standings(store, "s")
    assert sum(r.games for r in rows) == 10 and sum(r.games for r in rows_before) == 12

    from arena.ladder import tally_store
    from arena.ladder.tally import Tally

    with store.read() as s:
        season_id = s.get_one(Match, decisive.id).season_id
    stale = Tally(6)  # a tally some process made before the void: never saved over the corrected one
    assert not tally_store.save(store.engine, season_id, stale, None, revision=0)
    assert tally_store.save(store.engine, season_id, stale, None, revision=1)

    kept = _tallies(store)
    with store.tx() as s:
        recount(s)  # the bots' tallies as the matches say them from scratch
    assert _tallies(store) == kept

    with pytest.raises(SeasonError, match="void already"):
        void_match(store, decisive.id, "again", WHO)
    with pytest.raises(SeasonError, match="needs a reason"):
        void_match(store, first.id, "  ", WHO)
    with store.read() as s:
        assert [(a.action, a.actor) for a in recent_actions(s)][:1] == [("void", WHO)]


def test_recompute_repairs_ratings_and_is_idempotent(store: Store, tmp_path) -> None:
    _season(store, tmp_path, matches=4)
    assert recompute_ratings(store, "s", WHO).changed_entries == 0
    with store.tx() as s:
        entry = s.scalars(select(Entry).where(Entry.rated > 0)).first()
        assert entry is not None
        entry.rating += 7.5
        rc = s.scalars(select(RatingChange)).first()
        assert rc is not None
        rc.after -= 3.0
    assert verify_ratings(store, "s")  # damaged
    done = recompute_ratings(store, "s", WHO)
    assert (done.changed_entries, done.changed_ratings, done.results) == (1, 1, 4)
    assert verify_ratings(store, "s") == []
    assert recompute_ratings(store, "s", WHO).changed_ratings == 0


def test_a_paused_season_starts_nothing_until_resumed(store: Store, tmp_path) -> None:
    _season(store, tmp_path, matches=2)
    pause_season(store, "s", WHO, on=True)
    with pytest.raises(SeasonError, match="paused"):
        SeasonRun(store, "s", launcher="local", matches=4)
    server = ServerRun(store, workers=1, launcher="local", refresh=0)
    assert server.next_job() is None  # the server's players skip it
    pause_season(store, "s", WHO, on=False)
    run = SeasonRun(store, "s", launcher="local", matches=4)
    run_pool(run, engine_play.play, concurrency=1, threads=True)
    with store.read() as s:
        assert s.scalar(select(Match.id).where(Match.status == "done").offset(3)) is not None
        assert [a.action for a in recent_actions(s)][:2] == ["resume", "pause"]
    with pytest.raises(SeasonError, match="no season"):
        pause_season(store, "nope", WHO, on=True)


def test_failed_matches_go_back_to_the_queue(store: Store, tmp_path) -> None:
    _season(store, tmp_path, matches=2)
    with store.tx() as s:
        m = s.scalars(select(Match).where(Match.status == "done")).first()
        assert m is not None
        season_id = m.season_id
        failed = Match(
            season_id=season_id, kind="ladder", version0_id=m.version0_id, version1_id=m.version1_id,
            entry0_id=m.entry0_id, entry1_id=m.entry1_id, seed=12345, status="failed", attempts=3,
            verdict_details=["boom", "boom"],
        )  # fmt: skip
        s.add(failed)
        s.flush()
        failed_id = failed.id
    with pytest.raises(SeasonError, match="not failed"):
        requeue_failed(store, WHO, match_id=m.id)
    assert requeue_failed(store, WHO, season="s") == [failed_id]
    with store.read() as s:
        again = s.get_one(Match, failed_id)
        assert (again.status, again.attempts, again.verdict_details) == ("queued", 0, [])
        assert again.seed != 12345  # new decks: the failed attempt's are not reused
    assert requeue_failed(store, WHO, season="s") == []


def test_a_drained_server_worker_takes_no_new_match(store: Store, tmp_path) -> None:
    _season(store, tmp_path, matches=0)
    server = ServerRun(store, workers=1, launcher="local", refresh=0)
    host = server.owner.split(":")[0]
    with store.tx() as s:
        assert drains.drain(s, f"{host}:{server.owner.split(':')[1]}", "kernel upgrade")
    assert server.next_job() is None and server.draining
    with store.read() as s:
        listed = drains.workers(s)
    assert [(w.draining, w.reason) for w in listed] == [(True, "kernel upgrade")]
    with store.tx() as s:
        drains.undrain(s, f"{host}:{server.owner.split(':')[1]}")
    job = server.next_job()
    assert job is not None and not server.draining
    with store.read() as s:
        assert [w.name for w in drains.workers(s)] == [server.owner]  # it holds the match now
    with pytest.raises(drains.DrainError, match="not drained"), store.tx() as s:
        drains.undrain(s, host)
