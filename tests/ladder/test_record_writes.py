"""What recording a result writes, on SQLite and PostgreSQL (where the match, its replay and logs,
the rating changes and the entries' figures go out as one statement, and the lease check and the
season's count as another): every row as the rules say, nothing when the lease is lost, the match
dropped when its season froze meanwhile."""

from __future__ import annotations

from sqlalchemy import select, update

from arena.ladder.ratings import elo_update
from arena.ladder.record import record_result
from arena.store import MatchResult, Store
from arena.store.models import BotTally, Entry, Match, MatchLog, RatingChange, Replay, Season
from arena.store.queue import claim, lease_owner
from tests.store.scale_support import Ladder, fill

OWNER = lease_owner()


def _claimed(store: Store) -> tuple[Ladder, int]:
    ladder = fill(store, matches=40, bots=4, open_pairs=2)
    with store.tx() as s:
        m = claim(s, OWNER, season_id=ladder.season_id, kinds=("ladder",))
        assert m is not None
        return ladder, m.id


def _figures(store: Store, entry_ids: tuple[int, int]) -> dict[int, tuple]:
    with store.read() as s:
        rows = s.execute(
            select(
                Entry.id, Entry.rating, Entry.rated, Entry.wins, Entry.draws, Entry.losses, Entry.voids
            ).where(Entry.id.in_(entry_ids))
        ).all()
    return {r.id: tuple(r[1:]) for r in rows}


def _tallies(store: Store) -> dict[tuple, tuple]:
    with store.read() as s:
        rows = s.execute(select(BotTally)).scalars().all()
        return {(t.bot_id, t.opponent_id, t.verdict): (t.matches, t.wins, t.draws, t.losses) for t in rows}


def test_a_won_match_writes_its_row_replay_logs_changes_figures_and_tallies(store: Store) -> None:
    ladder, match_id = _claimed(store)
    with store.read() as s:
        m = s.get_one(Match, match_id)
        e0, e1, v0, v1 = m.entry0_id, m.entry1_id, m.version0_id, m.version1_id
        recorded = s.get_one(Season, ladder.season_id).recorded
    assert e0 is not None and e1 is not None
    before = _figures(store, (e0, e1))
    tallies = _tallies(store)
    result = MatchResult(winner=1, void=False, verdicts=("OK", "OK"), verdict_details=("", "slow"),
                         lines=(2, 5), deals_played=3, replay=b"the replay", logs=("", "seat one says"),
                         duration=2.5)  # fmt: skip
    assert record_result(store, OWNER, match_id, result).recorded
    with store.read() as s:
        m = s.get_one(Match, match_id)
        assert (m.status, m.lease_owner, m.lease_expires, m.record_seq) == ("done", None, None, recorded)
        assert (m.winner, m.void, m.verdicts, m.verdict_details) == (1, False, ["OK", "OK"], ["", "slow"])
        assert (m.lines, m.deals_played, m.duration) == ([2, 5], 3, 2.5) and m.finished_at is not None
        assert s.get_one(Season, ladder.season_id).recorded == recorded + 1
        assert s.get_one(Replay, match_id).data == b"the replay"
        logs = s.execute(select(MatchLog.seat, MatchLog.text).where(MatchLog.match_id == match_id)).all()
        assert [tuple(x) for x in logs] == [(1, "seat one says")]  # an empty seat's output is not kept
        changes = {
            c.entry_id: c for c in s.scalars(select(RatingChange).where(RatingChange.match_id == match_id))
        }
        bots = dict(s.execute(select(Entry.id, Entry.version_id).where(Entry.id.in_((e0, e1)))).all())
    c0, c1 = elo_update(before[e0][0], before[e0][1], before[e1][0], before[e1][1], 0.0)
    assert (changes[e0].before, changes[e0].after, changes[e0].k, changes[e0].score) == (
        c0.before, c0.after, c0.k, 0.0,
    )  # fmt: skip
    assert (changes[e1].before, changes[e1].after, changes[e1].score) == (c1.before, c1.after, 1.0)
    after = _figures(store, (e0, e1))
    r0, r1 = before[e0], before[e1]
    assert after[e0] == (c0.after, r0[1] + 1, r0[2], r0[3], r0[4] + 1, r0[5])  # a loss
    assert after[e1] == (c1.after, r1[1] + 1, r1[2] + 1, r1[3], r1[4], r1[5])  # a win
    assert bots == {e0: v0, e1: v1}
    grew = {k: v for k, v in _tallies(store).items() if tallies.get(k) != v}
    assert len(grew) == 2 and all(v[0] == tallies.get(k, (0,))[0] + 1 for k, v in grew.items())


def test_a_void_match_counts_a_void_for_both_and_changes_no_rating(store: Store) -> None:
    _ladder, match_id = _claimed(store)
    with store.read() as s:
        m = s.get_one(Match, match_id)
        e0, e1 = m.entry0_id, m.entry1_id
    assert e0 is not None and e1 is not None
    before = _figures(store, (e0, e1))
    result = MatchResult(winner=None, void=True, verdicts=("OK", "TIMEOUT"), replay=b"r")
    assert record_result(store, OWNER, match_id, result).recorded
    after = _figures(store, (e0, e1))
    assert after == {e: before[e][:5] + (before[e][5] + 1,) for e in (e0, e1)}
    with store.read() as s:
        assert not s.scalars(select(RatingChange).where(RatingChange.match_id == match_id)).all()
        assert s.get_one(Match, match_id).void


def test_a_lost_lease_writes_nothing(store: Store) -> None:
    ladder, match_id = _claimed(store)
    with store.read() as s:
        recorded = s.get_one(Season, ladder.season_id).recorded
    result = MatchResult(winner=0, void=False, verdicts=("OK", "OK"), replay=b"r")
    assert not record_result(store, "another:1:runner", match_id, result).recorded
    with store.read() as s:
        assert s.get_one(Match, match_id).status == "running"
        assert s.get_one(Season, ladder.season_id).recorded == recorded
        assert s.get(Replay, match_id) is None


def test_a_match_of_a_season_frozen_while_it_played_is_dropped(store: Store) -> None:
    ladder, match_id = _claimed(store)
    with store.tx() as s:
        recorded = s.get_one(Season, ladder.season_id).recorded
        s.execute(update(Season).where(Season.id == ladder.season_id).values(status="frozen"))
    result = MatchResult(winner=0, void=False, verdicts=("OK", "OK"), replay=b"r")
    assert not record_result(store, OWNER, match_id, result).recorded
    with store.read() as s:
        assert s.get(Match, match_id) is None
        assert s.get_one(Season, ladder.season_id).recorded == recorded
        assert s.get(Replay, match_id) is None
