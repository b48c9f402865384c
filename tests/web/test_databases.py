"""The web's queries on both databases the store supports (SQLite and PostgreSQL)."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from arena.web.app import create_app


def test_the_api_on_each_database(database_url, tmp_path, arena_builder, owner_tokens):
    arena = arena_builder(database_url, tmp_path)
    with TestClient(create_app(database_url, tmp_path, tokens=owner_tokens)) as client:
        rows = client.get("/api/standings", params={"season": "autumn"}).json()["rows"]
        assert sum(r["games"] for r in rows) == 14
        assert all(
            (r["interval"] is not None and r["interval"] > 0) != bool(r["bound"]) for r in rows
        )  # or a bound
        crash = client.get("/api/matches", params={"verdict": "CRASH"}).json()
        assert [m["id"] for m in crash["matches"]] == [arena.crash_match]
        assert client.get("/api/matches", params={"bot": "carol", "season": "spring"}).json()["total"] == sum(
            "carol" in r["names"] for r in arena.records.values() if r["season"] == "spring"
        )
        bob = client.get("/api/bots/bob").json()
        assert sum(h["games"] for h in bob["head_to_head"]) == sum(
            "bob" in r["names"] for r in arena.records.values()
        )
        listing = client.get("/matches").text
        assert '<option value="CRASH">' in listing and '<option value="OK">' in listing  # the verdict filter
        page = client.get(f"/matches/{arena.crash_match}", params={"deal": 2, "step": 3}).text
        assert 'data-deal="2" data-step="3"' in page


def test_hostile_and_broken_replays(tmp_path, arena_builder, owner_tokens):
    """A player name full of markup never shows (seats are labelled as registered); bytes that are not
    a record are a clear error on every route, the binary download included."""
    from sqlalchemy import update

    from arena.proto.codec import decode_record, encode_record
    from arena.store import Store
    from arena.store.models import Replay

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    arena = arena_builder(url, tmp_path)
    first, second, third = sorted(arena.records)[:3]
    rec = arena.records[first]["record"]
    evil = "</script><script>alert(1)</script>"
    rec.players[0].name = evil
    cheat = arena.records[third]["record"]
    cheat.deals[0].plays[2].card = cheat.deals[0].plays[0].card  # a card already played
    store = Store.open(url, home=tmp_path)
    with store.tx() as s:
        s.execute(update(Replay).where(Replay.match_id == first).values(data=encode_record(rec)))
        s.execute(update(Replay).where(Replay.match_id == second).values(data=b"not a record"))
        s.execute(update(Replay).where(Replay.match_id == third).values(data=encode_record(cheat)))
    store.close()
    with TestClient(create_app(url, tmp_path, tokens=owner_tokens)) as client:
        page = client.get(f"/matches/{first}").text
        assert evil not in page and "alert(1)" not in page
        label = client.get(f"/api/matches/{first}").json()["versions"][0]
        assert client.get(f"/api/matches/{first}/timeline").json()["seats"][0] == label
        assert decode_record(client.get(f"/api/matches/{first}/record.bin").content).players[0].name != evil
        broken = client.get(f"/api/matches/{second}/record")
        assert broken.status_code == 422 and "cannot be read" in broken.json()["detail"]
        page = client.get(f"/matches/{second}")
        assert page.status_code == 422 and "cannot be read" in page.text
        broken = client.get(f"/api/matches/{second}/record.bin")
        assert broken.status_code == 422 and "bad magic" in broken.json()["detail"]
        illegal = client.get(f"/api/matches/{third}/timeline")
        assert illegal.status_code == 422 and "not in your hand" in illegal.json()["detail"]


def test_a_frozen_season_shows_its_frozen_table(tmp_path, arena_builder, owner_tokens):
    from arena.ladder.seasons import freeze_season
    from arena.store import Store

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    from arena.ladder.standings import standings_with_los

    arena_builder(url, tmp_path)
    store = Store.open(url, home=tmp_path)
    live = {r.bot: r.los_next for r in standings_with_los(store, "spring")[1]}
    freeze_season(store, "spring")
    store.close()
    with TestClient(create_app(url, tmp_path, tokens=owner_tokens)) as client:
        out = client.get("/api/standings", params={"season": "spring"}).json()
        assert out["source"] == "frozen" and out["season"]["status"] == "frozen" and out["los"] is None
        # LOS over the next row on a frozen season too (docs/web.md), the figures of the table it froze
        frozen = {f"{r['bot']}@{r['version']}": r["los_next"] for r in out["rows"]}
        assert frozen == live and any(x is not None for x in frozen.values()), (frozen, live)
        assert re.search(r'<td class="num[^"]*">\d+%</td>', client.get("/?season=spring").text)
        assert sum(r["games"] for r in out["rows"]) == 2 * 3
        assert (
            client.get("/api/standings").json()["season"]["name"] == "autumn"
        )  # the running one is the default
        assert "Final standings of a closed season" in client.get("/?season=spring").text


def test_an_empty_arena(tmp_path, owner_tokens):
    """A fresh store (migrated on open) shows empty pages, not errors."""
    with TestClient(
        create_app(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path, tokens=owner_tokens)
    ) as client:
        assert "No season yet" in client.get("/").text
        assert client.get("/api/standings").json() == {
            "season": None,
            "seasons": [],
            "source": "live",
            "rows": [],
            "first": 1,
            "total": 0,
            "limit": 100,
            "next_after": None,
            "prev_after": None,
            "focus": None,
            "los": None,
        }
        assert "No matches." in client.get("/matches").text
        assert client.get("/api/matches").json()["total"] == 0
        assert client.get("/matches/1").status_code == 404


def test_sealing_on_each_database(database_url, tmp_path, sealed_builder, owner_tokens):
    """The reveal rule's queries (open pairs, empty replays, verdict filters) on SQLite and PostgreSQL."""
    sealed = sealed_builder(database_url, tmp_path)
    with TestClient(create_app(database_url, tmp_path, tokens=owner_tokens)) as client:
        assert client.get(f"/api/matches/{sealed.sealed_done}/record").status_code == 403
        assert client.get(f"/api/matches/{sealed.sealed_done}").json()["seed"] is None
        assert (
            client.get(f"/api/matches/{sealed.revealed[1]}").json()["seed"]
            == sealed.seeds[sealed.revealed[1]]
        )
        ok = client.get("/api/matches", params={"verdict": "OK"}).json()
        assert [m["id"] for m in ok["matches"]] == sorted(sealed.revealed, reverse=True)  # not the sealed one
        bot = client.get("/api/bots/honest").json()
        assert sum(bot["verdicts"].values()) == 2 and bot["recent"][0]["revealed"] is False
