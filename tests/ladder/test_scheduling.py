"""What the matchmaking skips between pairings, and that it skips nothing it needs (issue #18):
`sync_entries` does its ORM work only when the registry changed, and the pairing fit is refreshed
when results arrive (at its cadence), never otherwise."""

from __future__ import annotations

import engine_play
from sqlalchemy import select

from arena.ladder.pairing_fit import FitState, pairing_ratings, refit_due
from arena.ladder.ratings import PROVISIONAL_GAMES
from arena.ladder.runner import SeasonRun
from arena.ladder.season_entries import _sync_all, entries_in_sync
from arena.ladder.seasons import create_season, start_season
from arena.ladder.standings import season_fit
from arena.store import Store
from arena.store.models import Bot, BotVersion, Entry, Match, Season
from arena.store.repo import suspend_bot
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle


def _version(store: Store, name: str, owner: str, tag: str, *, build_ok: bool = True) -> None:
    store.add_version(
        name, owner, content_hash=f"{name}-{tag}".ljust(64, "0"), path=f"/b/{name}/{tag}", build_ok=build_ok
    )


def _entries(s, season: Season) -> set[tuple[int, bool]]:
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


def test_refit_due_only_when_the_fit_is_used_and_results_arrived() -> None:
    assert not refit_due(FitState(None, 3, 0, 0), 50)  # nobody past provisional: the fit would not be used
    assert refit_due(FitState(None, 3, 1, 1), 50)  # the first one past it: fit now
    fitted = FitState(40, 3, 2, 0)  # fitted on 40 results, both established entries rated
    assert not refit_due(fitted, 40)  # no new result: no refit
    assert not refit_due(fitted, 41)  # one new result of 40 fitted: not yet
    assert refit_due(fitted, 42)  # a twentieth of them
    assert refit_due(FitState(40, 3, 3, 1), 40)  # a bot just past provisional, not in the fit
    assert refit_due(fitted, 3)  # fewer than fitted: the season was rewound, refit
    assert not refit_due(FitState(40, 30, 2, 0), 41) and refit_due(FitState(40, 30, 2, 0), 43)
    # an established entry the last refit of this process could not rate waits for the cadence
    assert not refit_due(FitState(40, 3, 3, 1), 41, left_unrated=(40, 1))
    assert refit_due(FitState(40, 3, 3, 2), 41, left_unrated=(40, 1))  # another one since: refit


def _run(store: Store, name: str, matches: int) -> None:
    run_pool(
        SeasonRun(store, name, launcher="local", matches=matches),
        engine_play.play,
        concurrency=1,
        threads=True,
    )


def test_the_pairing_fit_is_refreshed_when_results_arrive_and_not_otherwise(store: Store, tmp_path) -> None:
    for name, owner, strategy in (("hi", "1", "high"), ("lo", "2", "low"), ("rnd", "3", "random")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, strategy), name=name, owner=owner
        )
    create_season(store, "f", seed=3)
    start_season(store, "f")
    _run(store, "f", 40)  # 3 bots, 40 matches: each past its 20 provisional ones

    def fit_now() -> tuple[int | None, dict[int, float], dict[int, float]]:
        with store.tx() as s:
            season = s.scalar(select(Season).where(Season.name == "f"))
            entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id)))
            assert all(e.rated >= PROVISIONAL_GAMES for e in entries)
            paired = pairing_ratings(s, season)
            fitted, fit = season_fit(s, season)
            return (
                season.pairing_fitted,
                paired,
                {e.id: float(fit.ratings[i]) for i, e in enumerate(fitted)},
            )

    with store.tx() as s:  # as if no process had fitted it yet
        s.scalar(select(Season).where(Season.name == "f")).pairing_fitted = None
    first, paired, fitted = fit_now()
    assert (
        first == 40 and paired == fitted
    )  # fitted on all 40 results, paired on it (stored with the entries)
    assert fit_now()[:2] == (40, paired)  # asked again with no new result: the same stored fit
    _run(store, "f", 41)  # one more result: under a twentieth of 40, the fit stays
    assert fit_now()[:2] == (40, paired)
    _run(store, "f", 42)  # the second one: refitted on all 42
    second, paired, fitted = fit_now()
    assert second == 42 and paired == fitted
    with store.tx() as s:
        assert s.scalar(select(Season).where(Season.name == "f")).recorded == 42
        assert len(list(s.scalars(select(Match).where(Match.status == "done")))) == 42


def test_a_new_pairing_is_taken_at_once_and_a_blocked_twin_stays_queued(store: Store) -> None:
    _version(store, "a", "ann", "1")
    _version(store, "b", "bob", "1")
    create_season(store, "d", duplicate=True, seed=5)
    start_season(store, "d")
    source = SeasonRun(store, "d", matches=10, launcher="local")
    first, second = source.next_job(), source.next_job()
    assert first is not None and second is not None
    with store.tx() as s:
        matches = {m.id: m for m in s.scalars(select(Match))}
        assert len(matches) == 4  # two pairings, each queued as twins
        taken = [matches[first.match_id], matches[second.match_id]]
        assert [m.pair for m in taken] == [0, 1]  # the twin of the first waits: its decks are in play
        for m in taken:
            assert (m.status, m.lease_owner, m.attempts) == ("running", source.owner, 1)
            assert m.id == min(x.id for x in matches.values() if x.pair == m.pair)  # the oldest of its pair
        assert sorted(m.status for m in matches.values()) == ["queued", "queued", "running", "running"]
    assert source.counts() == (0, 4)
