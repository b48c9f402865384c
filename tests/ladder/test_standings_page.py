"""`arena standings` prints one page of the table (`--limit`, `--after`, `--bot`), says where it sits
and how to get the next, and the pages put together are the whole table, each row once."""

from __future__ import annotations

import json

from arena.store import Store
from tests.ladder.ladder_rows import make_season, random_results, record


def test_arena_standings_pages_the_table(arena, tmp_path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'home' / 'arena.db'}")
    ids = make_season(store, 25, "big")
    record(store, "big", random_results(ids, 300, seed=12))

    whole = json.loads(arena("standings", "big", "--json").output)
    assert (whole["first"], whole["total"], whole["next_after"]) == (1, 25, None)
    assert len(whole["rows"]) == 25

    seen: list[str] = []
    after: int | None = 0
    while after is not None:
        page = json.loads(arena("standings", "big", "--json", "--limit", "10", "--after", str(after)).output)
        assert page["first"] == after + 1 and len(page["rows"]) <= 10
        seen += [r["label"] for r in page["rows"]]
        after = page["next_after"]
    assert seen == [r["label"] for r in whole["rows"]]

    text = arena("standings", "big", "--limit", "10").output
    assert "rows 1-10 of 25; the next: --after 10" in text
    target = whole["rows"][17]["label"]
    found = json.loads(
        arena("standings", "big", "--json", "--limit", "10", "--bot", target.split("@")[0]).output
    )
    assert found["first"] == 11 and target in [r["label"] for r in found["rows"]]

    missing = arena("standings", "big", "--bot", "nobody", ok=False)
    assert missing.exit_code != 0 and "nobody" in missing.output and "Traceback" not in missing.output
    over = arena("standings", "big", "--limit", "501", ok=False)
    assert over.exit_code == 2 and "--limit" in over.output
