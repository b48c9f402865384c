"""A ladder match's three steps (pair, claim, record) run the same SQL statements at two store
sizes, and a pairing reads the registry only when it changed (issue #30).

The steps are taken as the season runner and `arena bench scale` take them (`scale_ladder`), on a
ladder written in bulk (`tests.store.scale_support.fill`); statements are counted on the real
engine."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.ladder.record import record_result
from arena.ladder.seasons import schedule
from arena.store import MatchResult, Store
from arena.store.models import Bot, BotVersion, Entry, RegistryRev, Season
from arena.store.queue import claim, lease_owner
from tests.store.scale_support import counted, fill

SIZES = ((300, 12), (1600, 40))  # (finished matches, bots)
RESULT = MatchResult(winner=0, void=False, verdicts=("OK", "OK"), replay=b"replay", duration=1.0)
REGISTRY_READ = "build_ok"  # a column only the registry check reads


def _steps(store: Store, season_id: int) -> dict[str, Callable[[], None]]:
    owner = lease_owner()
    claimed: list[int] = []

    def pair() -> None:
        with store.tx() as s:
            assert schedule(s, s.get_one(Season, season_id, with_for_update=True), 1)

    def take() -> None:
        with store.tx() as s:
            s.get_one(Season, season_id, with_for_update=True)
            m = claim(s, owner, season_id=season_id, kinds=("ladder",))
            assert m is not None
            claimed.append(m.id)

    def put() -> None:
        assert record_result(store, owner, claimed.pop(0), RESULT).recorded

    return {"pair": pair, "claim": take, "record": put}


def _counts(store: Store, matches: int, bots: int, name: str) -> dict[str, list[str]]:
    """Each step's statements on a new season of `matches` finished matches between `bots` bots
    (the store's earlier seasons frozen beside it), at the third cycle: the first pairing finds the
    season never synced, and checks the registry."""
    with store.tx() as s:
        s.execute(update(Season).values(status="frozen"))
    ladder = fill(store, matches=matches, bots=bots, open_pairs=0, name=name)
    steps = _steps(store, ladder.season_id)
    out: dict[str, list[str]] = {}
    for _ in range(3):
        for step, run in steps.items():
            with counted(store) as statements:
                run()
            out[step] = statements
    return out


def test_each_step_runs_the_same_statements_at_two_sizes(store: Store) -> None:
    small, large = (_counts(store, m, b, f"size{i}") for i, (m, b) in enumerate(SIZES))
    n_small, n_large = ({k: len(v) for k, v in c.items()} for c in (small, large))
    assert n_small == n_large, (n_small, n_large)
    pg = store.engine.dialect.name == "postgresql"
    # SQLite: its BEGIN IMMEDIATE, and one INSERT per row where PostgreSQL batches them
    # pair: the season row, the pick with the registry's count and the fit's state, the twins' INSERT,
    # their commitments, the season's and the entries' updates
    # claim: the season row, then on PostgreSQL the pick with its seed's lock (running deck-mates
    # kept out by the same query) and the lease (an UPDATE that looks again for a running deck-mate);
    # on SQLite the running matches, the pick and the lease
    # record: the match under lease with its season's count (one statement on PostgreSQL), the
    # entries locked and read, then on PostgreSQL one statement for the match, its replay, the rating
    # changes and the entries' figures (SQLite: one each, an UPDATE per entry), and the bots' tallies
    assert n_large == ({"pair": 6, "claim": 3, "record": 4} if pg else {"pair": 8, "claim": 5, "record": 10})
    assert not any(REGISTRY_READ in x for c in (small, large) for x in c["pair"]), large["pair"]


def _rev(store: Store) -> int:
    with store.read() as s:
        return s.get_one(RegistryRev, 1).rev


def test_every_change_that_decides_the_entries_moves_the_registry_count(store: Store) -> None:
    ladder = fill(store, matches=20, bots=4, open_pairs=0)
    changes: list[tuple[str, Callable[[Session], object], bool]] = [
        ("register", lambda s: s.add(Bot(name="new", owner="o")), True),
        (
            "retire",
            lambda s: s.execute(update(Bot).where(Bot.name == ladder.bots[0]).values(retired=True)),
            True,
        ),
        (
            "suspend",
            lambda s: s.execute(update(Bot).where(Bot.name == ladder.bots[1]).values(suspended=True)),
            True,
        ),
        ("rename owner", lambda s: s.execute(update(Bot).values(owner="x")), False),
        ("build", lambda s: s.execute(update(BotVersion).values(build_ok=False)), True),
        ("compare only", lambda s: s.execute(update(BotVersion).values(ladder=False)), True),
        ("build log", lambda s: s.execute(update(BotVersion).values(build_log="x")), False),
        ("deactivate", lambda s: s.execute(update(Entry).values(active=False)), True),
        ("rate", lambda s: s.execute(update(Entry).values(rating=1234.0, last_scheduled=3)), False),
    ]
    for what, change, moves in changes:
        before = _rev(store)
        with store.tx() as s:
            change(s)
        assert (_rev(store) > before) == moves, what


def test_a_pairing_reads_the_registry_once_after_it_changed(store: Store) -> None:
    ladder = fill(store, matches=20, bots=4, open_pairs=0)
    pair = _steps(store, ladder.season_id)["pair"]
    pair()  # never synced: checks

    def reads() -> bool:
        with counted(store) as statements:
            pair()
        return any(REGISTRY_READ in x for x in statements)

    assert not reads()
    store.add_version("late", "lou", content_hash="l" * 64, path="/b/late")
    assert reads()  # the new bot is seen at once, and entered
    with store.read() as s:
        entered = s.scalars(
            select(Bot.name)
            .join(BotVersion)
            .join(Entry)
            .where(Entry.season_id == ladder.season_id, Entry.active)
        ).all()
    assert "late" in entered
    assert reads()  # its entry moved the count once more: one check finds the season in sync
    assert not reads()
