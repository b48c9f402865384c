"""Matches that share decks never run at once: the queue's claim rule, on SQLite and PostgreSQL.

Deck-mates are matches with the same seed (the twins of a duplicate pair, a seeded compare's pairs)
or the same season and pair. A queued match is passed over while a deck-mate runs and becomes
claimable once that one is done or failed. On PostgreSQL many claimers at the same instant still
never hold two deck-mates (the per-seed advisory lock in `claim`).
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import BigInteger, create_engine, func, literal, select

from arena.store import Store
from arena.store.models import Match, Season
from arena.store.queue import DECK_LOCK_SPACE, claim, deck_key, release, requeue_abandoned


def _versions(store: Store) -> tuple[int, int]:
    a = store.add_version("ta", "oa", content_hash="h-ta", path="/b/ta").version
    b = store.add_version("tb", "ob", content_hash="h-tb", path="/b/tb").version
    return a.id, b.id


def _queue(store: Store, rows: list[tuple[int | None, int | None, int]]) -> list[int]:
    """Queue one match per (season pair index or None, season or None, seed); returns their ids."""
    a, b = _versions(store)
    with store.tx() as s:
        season = Season(name="twins", seed=1)
        s.add(season)
        s.flush()
        ids = []
        for pair, in_season, seed in rows:
            m = Match(
                season_id=season.id if in_season else None,
                pair=pair,
                kind="ladder" if in_season else "compare",
                version0_id=a,
                version1_id=b,
                seed=seed,
            )
            s.add(m)
            s.flush()
            ids.append(m.id)
        return ids


def _claim(store: Store, owner: str = "h:1:a", **kw) -> int | None:
    with store.tx() as s:
        m = claim(s, owner, **kw)
        return None if m is None else m.id


def _set(store: Store, match_id: int, status: str) -> None:
    with store.tx() as s:
        s.get_one(Match, match_id).status = status


def test_a_twin_waits_until_its_partner_is_over(store: Store) -> None:
    # pair 0: twins (same seed); pair 1: twins; then a compare pair sharing a seed and no season
    t0, t1, u0, u1, c0, c1 = _queue(
        store, [(0, 1, 11), (0, 1, 11), (1, 1, 22), (1, 1, 22), (0, 0, 33), (0, 0, 33)]
    )
    assert _claim(store) == t0
    assert _claim(store) == u0  # t1 is passed over: its twin t0 is running
    assert _claim(store) == c0
    assert _claim(store) is None  # every queued match has a running deck-mate
    _set(store, t0, "done")
    assert _claim(store) == t1
    _set(store, u0, "failed")  # a failed partner frees its twin as well
    assert _claim(store) == u1
    with store.tx() as s:
        release(s, "h:1:a", c0)  # back in the queue: either twin may go next, but only one
    first = _claim(store)
    assert first == c0 and _claim(store) is None


def test_same_season_and_pair_are_deck_mates_even_with_other_seeds(store: Store) -> None:
    a, b, other = _queue(store, [(4, 1, 1), (4, 1, 2), (4, 0, 2)])  # rows from before per-pair seeds
    assert _claim(store) == a
    assert _claim(store) == other  # no season: not a's deck-mate, and b (seed 2) is not running yet
    assert _claim(store) is None  # b: same season and pair as a, and the same seed as `other`


def test_started_at_is_set_at_claim_and_cleared_when_given_back(store: Store) -> None:
    (m,) = _queue(store, [(0, 1, 5)])
    with store.tx() as s:
        assert s.get_one(Match, m).started_at is None
    _claim(store, "elsewhere:1:x")
    with store.tx() as s:
        first = s.get_one(Match, m).started_at
        assert first is not None
        assert requeue_abandoned(s, now=10**12) == 1  # lease long expired
        assert s.get_one(Match, m).started_at is None
    _claim(store, "elsewhere:2:y")
    with store.tx() as s:
        again = s.get_one(Match, m).started_at
        assert again is not None and again >= first  # the last start is what is kept
        release(s, "elsewhere:2:y", m)
    with store.tx() as s:
        assert s.get_one(Match, m).started_at is None and s.get_one(Match, m).status == "queued"


def test_claimers_at_the_same_instant_never_hold_two_deck_mates(store: Store) -> None:
    """Eight claimers, each holding its transaction open until all have claimed (on PostgreSQL: so
    every claim races every other; SQLite serialises writers, so there they run one after another)."""
    pairs = 4
    ids = _queue(store, [(p, 1, 100 + p) for p in range(pairs) for _ in (0, 1)])
    claimers = 2 * pairs
    together = threading.Barrier(claimers) if store.dialect == "postgresql" else None
    claimed: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker(i: int) -> None:
        try:
            with store.tx() as s:
                m = claim(s, f"h:{i}:w")
                if m is not None:
                    with lock:
                        claimed.append(m.id)
                if together is not None:
                    together.wait(timeout=60)  # everyone has claimed before anyone commits
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(claimers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    with store.tx() as s:
        running = list(s.scalars(select(Match).where(Match.status == "running")))
    assert sorted(claimed) == sorted(m.id for m in running)
    seeds = [m.seed for m in running]
    assert len(seeds) == len(set(seeds))  # never both twins
    assert set(m.id for m in running) <= set(ids)
    if together is None:
        assert len(running) == pairs  # serialised: exactly one of each pair


def _fold(seed: int) -> int:
    """The advisory-lock key of a seed, as `deck_key` computes it in SQL: the 63-bit seed folded to 32
    bits, taken as a signed INTEGER."""
    key = (seed ^ (seed >> 32)) & 0xFFFFFFFF
    return key - (1 << 32) if key >= 1 << 31 else key


def test_the_seed_lock_key_is_the_seed_folded_to_a_signed_integer(database_url: str) -> None:
    if not database_url.startswith("postgresql"):
        pytest.skip("the seed lock is PostgreSQL's (SQLite runs one claimer at a time)")
    seeds = [0, 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 2**31, 2**63 - 1, 0x5EED << 40]
    engine = create_engine(database_url)
    try:
        with engine.connect() as conn:
            keys = [conn.scalar(select(deck_key(literal(seed, BigInteger)))) for seed in seeds]
    finally:
        engine.dispose()
    assert keys == [_fold(seed) for seed in seeds]


def test_a_claim_passes_over_a_match_whose_seed_another_claimer_holds(store: Store) -> None:
    """The pick takes its seed's lock itself: while another transaction holds that lock (a claimer
    in the middle of taking its twin), the oldest queued match is passed over for the next."""
    if store.dialect != "postgresql":
        pytest.skip("the seed lock is PostgreSQL's (SQLite runs one claimer at a time)")
    first, second = _queue(store, [(None, None, 71), (None, None, 72)])
    with store.tx() as other:
        assert other.scalar(select(func.pg_try_advisory_xact_lock(DECK_LOCK_SPACE, _fold(71))))
        assert _claim(store) == second
    assert _claim(store, "h:1:b") == first  # the lock went with the other transaction
