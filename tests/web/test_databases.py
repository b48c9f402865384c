"""The web's queries on both databases the store supports (SQLite and PostgreSQL)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from arena.web.app import create_app


def test_the_api_on_each_database(database_url, tmp_path, arena_builder, owner_tokens):
    arena = arena_builder(database_url, tmp_path)
    with TestClient(create_app(database_url, tmp_path, tokens=owner_tokens)) as client:
        rows = client.get("/api/standings", params={"season": "autumn"}).json()["rows"]
        assert sum(r["games"] for r in rows) == 14 and all(r["interval"] for r in rows)
        crash = client.get("/api/matches", params={"verdict": "CRASH"}).json()
        assert [m["id"] for m in crash["matches"]] == [arena.crash_match]
        assert client.get("/api/matches", params={"bot": "carol", "season": "spring"}).json()["total"] == sum(
            "carol" in r["names"] for r in arena.records.values() if r["season"] == "spring")
        bob = client.get("/api/bots/bob").json()
        assert sum(h["games"] for h in bob["head_to_head"]) == sum("bob" in r["names"] for r in arena.records.values())
        page = client.get(f"/matches/{arena.crash_match}", params={"deal": 2, "step": 3}).text
        assert 'data-deal="2" data-step="3"' in page
