"""A retried match gets new decks, with its queued deck-mates, unless a deck-mate is already done.

Spectators may have watched the first attempt one trick behind, so replaying its decks would tell
them cards of both hands. Where a deck-mate is done the decks must stay (the pair's result needs
them), and the retry's live stream is embargoed instead (`decks_replayed`).
"""

from __future__ import annotations

from arena.engine import check_commitment
from arena.ladder.visibility import decks_replayed
from arena.store import Store
from arena.store.decks import commit_decks
from arena.store.models import Match, Season
from arena.store.queue import claim, release, requeue_abandoned


def _queue(store: Store, n: int, seed: int) -> list[int]:
    """n deck-mates (one season pair, one seed), each with its commitment."""
    a = store.add_version("ra", "oa", content_hash="h-ra", path="/b/ra").version
    b = store.add_version("rb", "ob", content_hash="h-rb", path="/b/rb").version
    with store.tx() as s:
        season = Season(name=f"redeal{seed}", seed=1)
        s.add(season)
        s.flush()
        ids = []
        for i in range(n):
            m = Match(
                season_id=season.id, pair=0, kind="ladder", seed=seed, version0_id=a.id, version1_id=b.id
            )
            if i % 2:
                m.version0_id, m.version1_id = b.id, a.id
            s.add(m)
            commit_decks(s, m)
            ids.append(m.id)
        return ids


def _decks(store: Store, ids: list[int]) -> list[tuple[int, str, str]]:
    with store.tx() as s:
        return [(m.seed, m.salt, m.commitment) for m in (s.get_one(Match, i) for i in ids)]


def _claim(store: Store, owner: str) -> int | None:
    with store.tx() as s:
        m = claim(s, owner)
        return None if m is None else m.id


def _honest(store: Store, ids: list[int]) -> None:
    for match_id, (seed, salt, commitment) in zip(ids, _decks(store, ids), strict=True):
        assert check_commitment(commitment, seed, f"m{match_id}", bytes.fromhex(salt))


def test_a_retry_whose_twin_waits_gets_new_decks_for_both(store: Store) -> None:
    first, twin = _queue(store, 2, seed=41)
    before = _decks(store, [first, twin])
    assert _claim(store, "elsewhere:1:x") == first
    with store.tx() as s:
        assert requeue_abandoned(s, now=10**12) == 1  # its worker is gone
    after = _decks(store, [first, twin])
    assert after[0][0] == after[1][0] != 41  # one new seed, shared: still a duplicate pair
    assert {after[0][1], after[1][1]}.isdisjoint({before[0][1], before[1][1]})  # new salts
    assert after[0][2] != before[0][2] and after[1][2] != before[1][2]  # new public commitments
    _honest(store, [first, twin])
    with store.tx() as s:
        assert not decks_replayed(s, s.get_one(Match, first))


def test_an_interrupted_run_gives_new_decks_too(store: Store) -> None:
    (alone,) = _queue(store, 1, seed=42)
    assert _claim(store, "h:1:a") == alone
    with store.tx() as s:
        release(s, "h:1:a", alone)
        assert s.get_one(Match, alone).status == "queued"
    assert _decks(store, [alone])[0][0] != 42
    _honest(store, [alone])
    with store.tx() as s:
        release(s, "someone-else", alone)  # a lease this runner does not hold: nothing happens
    assert _decks(store, [alone])[0][0] != 42


def test_a_retry_whose_twin_is_done_keeps_its_decks_and_is_embargoed(store: Store) -> None:
    first, twin = _queue(store, 2, seed=43)
    assert _claim(store, "h:1:a") == first
    with store.tx() as s:
        m = s.get_one(Match, first)
        m.status, m.lease_owner = "done", None
    assert _claim(store, "h:1:b") == twin
    before = _decks(store, [first, twin])
    with store.tx() as s:
        release(s, "h:1:b", twin)  # the second twin's worker broke off
    assert _decks(store, [first, twin]) == before  # the pair's result needs the same decks
    with store.tx() as s:
        assert not decks_replayed(s, s.get_one(Match, twin))  # queued, never retried yet: attempts 1
    assert _claim(store, "h:1:c") == twin
    with store.tx() as s:
        again = s.get_one(Match, twin)
        assert again.attempts == 2 and decks_replayed(s, again)  # watched decks: status only
        again.status, again.lease_owner = "done", None
    with store.tx() as s:
        assert not decks_replayed(s, s.get_one(Match, twin))  # done: the reveal rule decides now
