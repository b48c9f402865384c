"""`revealed` and `unrevealed_ids`: a match's decks become public only when it and every match sharing
its decks are over. Both helpers must agree, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import select

from arena.ladder.visibility import revealed, unrevealed_ids
from arena.store import Store
from arena.store.models import Match, Season


def _setup(store: Store) -> dict[str, int]:
    a = store.add_version("va", "oa", content_hash="h-va", path="/b/va").version.id
    b = store.add_version("vb", "ob", content_hash="h-vb", path="/b/vb").version.id
    rows = {
        # name: (season?, pair, seed)
        "t0": (True, 0, 11),  # twins of pair 0
        "t1": (True, 0, 11),
        "u0": (True, 1, 22),  # twins of pair 1
        "u1": (True, 1, 22),
        "solo": (True, 2, 33),  # a single match (not duplicate)
        "c0": (False, 0, 44),  # a compare pair: no season, the same seed
        "c1": (False, 0, 44),
        "other": (False, 0, 55),  # another compare's pair 0: same pair number, other seed, no season
    }
    with store.tx() as s:
        season = Season(name="vis", seed=1)
        s.add(season)
        s.flush()
        ids = {}
        for name, (in_season, pair, seed) in rows.items():
            m = Match(
                season_id=season.id if in_season else None,
                pair=pair,
                version0_id=a,
                version1_id=b,
                seed=seed,
            )
            s.add(m)
            s.flush()
            ids[name] = m.id
        return ids


def _states(store: Store, ids: dict[str, int], **states: str) -> None:
    with store.tx() as s:
        for name, status in states.items():
            if status == "deleted":
                s.delete(s.get_one(Match, ids[name]))
            else:
                s.get_one(Match, ids[name]).status = status


def _shown(store: Store, ids: dict[str, int]) -> set[str]:
    """The names revealed, asked both ways; the two helpers must agree."""
    with store.read() as s:
        matches = list(s.scalars(select(Match)))
        one_by_one = {m.id for m in matches if revealed(s, m)}
        hidden = unrevealed_ids(s, matches)
    assert one_by_one == {m.id for m in matches} - hidden
    names = {v: k for k, v in ids.items()}
    return {names[i] for i in one_by_one}


def test_nothing_is_revealed_until_done_and_twins_wait_for_each_other(store: Store) -> None:
    ids = _setup(store)
    assert _shown(store, ids) == set()  # all queued
    _states(store, ids, t0="running", u0="running", c0="running", solo="running")
    assert _shown(store, ids) == set()
    _states(store, ids, t0="done", solo="done", c0="done", other="done")
    assert _shown(store, ids) == {"solo", "other"}  # t0 and c0 wait: their twins are still queued
    _states(store, ids, t1="running", c1="running")
    assert _shown(store, ids) == {"solo", "other"}  # and still running
    _states(store, ids, t1="done")
    assert _shown(store, ids) == {"solo", "other", "t0", "t1"}
    _states(store, ids, u0="done", u1="failed")  # a failed twin never plays: its partner is revealed
    assert _shown(store, ids) == {"solo", "other", "t0", "t1", "u0"}  # a failed match itself never is
    _states(store, ids, c1="deleted")  # e.g. a compare's cleanup or a frozen season's queue
    assert _shown(store, ids) == {"solo", "other", "t0", "t1", "u0", "c0"}


def test_the_same_seed_is_a_deck_mate_across_seasons_and_compares(store: Store) -> None:
    ids = _setup(store)
    with store.tx() as s:  # a compare with a user seed that happens to give t0's decks
        m = s.get_one(Match, ids["other"])
        m.seed = 11
    _states(store, ids, t0="done", t1="done", other="queued")
    assert "t0" not in _shown(store, ids) and "t1" not in _shown(store, ids)
    _states(store, ids, other="done")
    assert {"t0", "t1", "other"} <= _shown(store, ids)


def test_unrevealed_ids_handles_empty_and_long_lists(store: Store, monkeypatch) -> None:
    from arena.ladder import visibility

    ids = _setup(store)
    with store.read() as s:
        assert unrevealed_ids(s, []) == set()
    _states(store, ids, t0="done", u0="done", u1="done", solo="done", c0="done")
    monkeypatch.setattr(visibility, "CHUNK", 1)  # every IN list split into single values: same answer
    assert _shown(store, ids) == {"u0", "u1", "solo"}


def test_season_export_writes_only_revealed_matches(store: Store, tmp_path) -> None:
    from arena.ladder.export import export_replays
    from arena.store.models import Replay

    ids = _setup(store)
    _states(store, ids, t0="done", solo="done")
    with store.tx() as s:
        for name in ("t0", "solo"):
            s.add(Replay(match_id=ids[name], data=f"record of {name}".encode()))
    out, count = export_replays(store, "vis", tmp_path / "out")
    assert count == 1 and [p.read_bytes() for p in out.iterdir()] == [b"record of solo"]  # t1 still queued
    _states(store, ids, t1="failed")
    out, count = export_replays(store, "vis", tmp_path / "out")
    assert count == 2 and sorted(p.read_bytes() for p in out.iterdir()) == [
        b"record of solo",
        b"record of t0",
    ]
