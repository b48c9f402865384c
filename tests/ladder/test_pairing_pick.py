"""The pairing query (`pick_in_sql`) picks what the matchmaking's rule in Python (`pick_pairing`)
picks, on random fields: owners shared, entries busy, failed, new or long waiting, pairing ratings
stored for some, ties in rating and waiting (issue #30), pairs at, under and over the repeat cap,
entries out of reach (issue #33)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from sqlalchemy import select

from arena.ladder.matchmaking import REACH, Candidate, Meetings, pick_pairing
from arena.ladder.pairing_pick import Seat, pick_in_sql
from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.store.models import Entry, Match, Season


class _Drawn(random.Random):
    """A generator whose Gaussian draw is fixed: the offset the query is given."""

    def __init__(self, offset: float) -> None:
        super().__init__(0)
        self.offset = offset

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        return self.offset


def _field(store: Store, rng: random.Random, bots: int, owners: int, name: str) -> int:
    for i in range(bots):
        store.add_version(
            f"b{i}", f"o{rng.randrange(owners)}", content_hash=f"{name}{i}".ljust(64, "0"), path=f"/b/{i}"
        )
    create_season(store, name, duplicate=True)
    start_season(store, name)
    with store.tx() as s:
        season = s.scalar(select(Season).where(Season.name == name))
        entries = list(s.scalars(select(Entry).where(Entry.season_id == season.id).order_by(Entry.id)))
        for e in entries:
            e.rating = float(
                rng.choice([1400, 1500, 1600, 1500 + REACH]) + rng.choice([0, 0, rng.uniform(-50, 50)])
            )
            e.pairing_elo = e.rating + rng.uniform(-80, 80) if rng.random() < 0.4 else None
            e.wins, e.losses = rng.choice([(0, 0), (0, 0), (rng.randrange(5), rng.randrange(5))])
            e.last_scheduled = rng.choice([-1, rng.randrange(4), rng.randrange(4)])
        for _ in range(rng.randrange(len(entries), 3 * len(entries))):
            a, b = rng.sample(entries, 2)
            s.add(
                Match(
                    season_id=season.id,
                    pair=rng.randrange(9),
                    version0_id=a.version_id,
                    version1_id=b.version_id,
                    entry0_id=a.id,
                    entry1_id=b.id,
                    seed=rng.randrange(1 << 62),
                    status=rng.choice(["queued", "running", "failed", *["done"] * 5]),
                )  # fmt: skip
            )
        return season.id


def _in_python(
    store: Store, season_id: int, offset: float, same_owner: bool, capped: bool = True
) -> tuple[Seat, Seat] | None:
    """The candidates as the matchmaking read them before the query, and `pick_pairing`'s choice."""
    with store.read() as s:
        entries = list(s.scalars(select(Entry).where(Entry.season_id == season_id, Entry.active.is_(True))))
        busy: Counter[int | None] = Counter()
        failed: Counter[int | None] = Counter()
        met = Meetings()
        for status, *seats in s.execute(
            select(Match.status, Match.entry0_id, Match.entry1_id).where(Match.season_id == season_id)
        ).all():
            met.add(*seats)
            if status in ("queued", "running", "failed"):
                (failed if status == "failed" else busy).update(seats)
        cands = [
            Candidate(
                e.id,
                e.version.bot.owner,
                e.pairing_elo if e.pairing_elo is not None else e.rating,
                e.wins + e.draws + e.losses + e.voids + busy[e.id] + failed[e.id],
                e.last_scheduled,
                e.id in busy,
            )
            for e in entries
        ]
        version = {e.id: e.version_id for e in entries}
    pick = pick_pairing(cands, _Drawn(offset), met=met, same_owner=same_owner, capped=capped)
    if pick is None:
        return None
    return Seat(pick[0].entry_id, version[pick[0].entry_id]), Seat(
        pick[1].entry_id, version[pick[1].entry_id]
    )


@pytest.mark.parametrize("shape", [(2, 1), (3, 2), (7, 2), (12, 5), (20, 9)])
def test_the_query_picks_what_the_rule_picks(store: Store, shape: tuple[int, int]) -> None:
    bots, owners = shape
    rng = random.Random(bots * 31 + owners)
    season_id = _field(store, rng, bots, owners, f"p{bots}")
    capped = 0  # draws where the cap or the reach changed the choice
    for _ in range(24):
        offset = rng.choice([0.0, rng.gauss(0.0, 100.0), 50.0, -50.0])
        for same_owner in (False, True):
            with store.read() as s:
                got = pick_in_sql(s, season_id, offset, same_owner=same_owner)
            assert got == _in_python(store, season_id, offset, same_owner), (offset, same_owner)
            capped += got != _in_python(store, season_id, offset, same_owner, capped=False)
        with store.tx() as s:  # the field moves on: the pair plays, someone waits less, someone plays
            if got is not None:
                x, y = s.get_one(Entry, got[0].entry_id), s.get_one(Entry, got[1].entry_id)
                s.add(
                    Match(
                        season_id=season_id,
                        pair=0,
                        version0_id=x.version_id,
                        version1_id=y.version_id,
                        entry0_id=x.id,
                        entry1_id=y.id,
                        seed=rng.randrange(1 << 62),
                        status="done",
                    )  # fmt: skip
                )
                x.wins, y.losses = x.wins + 1, y.losses + 1
                x.last_scheduled = y.last_scheduled = max(x.last_scheduled, y.last_scheduled) + 4
            e = s.get_one(
                Entry, rng.choice(list(s.scalars(select(Entry.id).where(Entry.season_id == season_id))))
            )
            e.last_scheduled += rng.randrange(1, 4)
            e.wins += rng.randrange(2)
    if bots >= 7:
        assert capped, "the cap and the reach never changed a pick: the field does not test them"
