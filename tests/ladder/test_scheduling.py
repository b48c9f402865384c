"""What the matchmaking skips between pairings, and that it skips nothing it needs (issue #18):
`sync_entries` does its ORM work only when the registry changed."""

from __future__ import annotations

from sqlalchemy import select

from arena.ladder.seasons import _sync_all, create_season, entries_in_sync, start_season
from arena.store import Store
from arena.store.models import Bot, BotVersion, Entry, Season
from arena.store.repo import suspend_bot


def _version(store: Store, name: str, owner: str, tag: str, *, build_ok: bool = True) -> None:
    store.add_version(
        name, owner, content_hash=f"{name}-{tag}".ljust(64, "0"), path=f"/b/{name}/{tag}", build_ok=build_ok
    )


def _entries(s, season: Season) -> set[tuple[int, bool]]:  # noqa: ANN001
    return {(e.version_id, e.active) for e in s.scalars(select(Entry).where(Entry.season_id == season.id))}


def _check(store: Store, name: str) -> tuple[bool, set[tuple[int, bool]], set[tuple[int, bool]]]:
    """Whether the quick check says "in sync", and the entries before and after the full sync."""
    with store.tx() as s:
        season = s.scalar(select(Season).where(Season.name == name))
        quick = entries_in_sync(s, season)
        before = _entries(s, season)
        _sync_all(s, season)
        after = _entries(s, season)
    assert quick == (before == after), "the quick check must agree with what the full sync does"
    return quick, before, after


def _label(store: Store, vid: int) -> str:
    with store.tx() as s:
        return s.get_one(BotVersion, vid).label


def test_sync_is_skipped_until_the_registry_changes_and_picks_up_every_change(store: Store) -> None:
    _version(store, "a", "ann", "1")
    _version(store, "b", "bob", "1")
    create_season(store, "s")
    start_season(store, "s")
    assert _check(store, "s")[0]  # just synced: nothing to do

    _version(store, "c", "cat", "1")  # a newly registered bot enters at the next pairing
    quick, before, after = _check(store, "s")
    assert not quick and {_label(store, v) for v, on in after - before if on} == {"c@1"}
    assert _check(store, "s")[0]

    _version(store, "a", "ann", "2")  # a new version replaces the old one
    quick, _, after = _check(store, "s")
    assert not quick and {_label(store, v) for v, on in after if on} == {"a@2", "b@1", "c@1"}

    _version(store, "b", "bob", "2", build_ok=False)  # a failed build changes nothing
    assert _check(store, "s")[0]
    with store.tx() as s:  # nor does a version `arena compare` registered (ladder=False)
        s.scalar(select(BotVersion).where(BotVersion.content_hash.startswith("b-2"))).build_ok = True
        for v in s.scalars(select(BotVersion).where(BotVersion.content_hash.startswith("b-2"))):
            v.ladder = False
    assert _check(store, "s")[0]

    store.retire("c")  # retiring deactivates the entries itself ...
    assert _check(store, "s")[0]
    with store.tx() as s:  # ... and a bot back in play is seen (flags changed by hand, as a migration might)
        s.scalar(select(Bot).where(Bot.name == "c")).retired = False
    quick, _, after = _check(store, "s")
    assert not quick and "c@1" in {_label(store, v) for v, on in after if on}

    with store.tx() as s:
        bot = s.scalar(select(Bot).where(Bot.name == "a"))
        suspend_bot(s, bot.id, "test")
    assert _check(store, "s")[0]
    with store.tx() as s:
        s.scalar(select(Bot).where(Bot.name == "a")).suspended = False
    quick, _, after = _check(store, "s")
    assert not quick and "a@2" in {_label(store, v) for v, on in after if on}
