"""Recorded matches for the tests of the solver's marks in the web viewer."""

from __future__ import annotations

from pathlib import Path

from record_support import play_record


def recorded_matches(url: str, home: Path, count: int = 2, deals: int = 1) -> list[int]:
    """A season of `count` recorded (finished, revealed) one-deal matches in a fresh store."""
    from sqlalchemy import select

    from arena.engine import Rules
    from arena.ladder.record import record_result
    from arena.ladder.seasons import create_season, schedule, start_season
    from arena.proto.codec import encode_record
    from arena.store import MatchResult, Store
    from arena.store.models import Season
    from arena.store.queue import claim

    store = Store.open(url, home=home)
    for name, owner in (("north", "ann"), ("south", "ben")):
        store.add_version(
            name, owner, content_hash=name.ljust(64, "0"), path=str(home / name), language="python"
        )
    create_season(store, "short", rules=[f"max_deals={deals}", "trumps=true"], seed=5)
    start_season(store, "short")
    ids = []
    for n in range(count):
        with store.tx() as s:
            season = s.scalar(select(Season).where(Season.name == "short"))
            schedule(s, season, 1)
            match = claim(s, "test-runner", season_id=season.id)
            assert match is not None
            mid, v0, v1 = match.id, match.version0_id, match.version1_id
        names = (store.version_by_id(v0).bot.name, store.version_by_id(v1).bot.name)
        rec, winner, verdicts, details, lines, deals = play_record(
            Rules(max_deals=1, trumps=True), 70 + n, names
        )
        result = MatchResult(winner=winner, void=False, verdicts=verdicts, verdict_details=details, lines=lines,
                             deals_played=deals, replay=encode_record(rec), logs=("", ""), duration=0.1)  # fmt: skip
        assert record_result(store, "test-runner", mid, result).recorded
        ids.append(mid)
    store.close()
    return ids
