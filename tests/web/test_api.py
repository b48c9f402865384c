"""The JSON API under /api, through FastAPI's TestClient over a real SQLite store."""

from __future__ import annotations

from arena.proto.codec import decode_record


def test_seasons_and_standings(client, arena):
    seasons = {s["name"]: s for s in client.get("/api/seasons").json()}
    assert seasons["autumn"]["matches"] == 7 and seasons["spring"]["matches"] == 3
    out = client.get("/api/standings", params={"season": "autumn"}).json()
    assert out["season"]["name"] == "autumn" and out["source"] == "fit"
    rows = out["rows"]
    assert {r["bot"] for r in rows} == {"alice", "bob", "carol"}
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert sum(r["games"] for r in rows) == 2 * 7
    for r in rows:
        assert r["wins"] + r["draws"] + r["losses"] == r["games"]
        assert r["provisional"] is True  # fewer than 20 rated matches
        assert (r["interval"] is not None and r["interval"] > 0) != bool(r["bound"])  # a bound has none
        assert r["live"] == r["recent"][-1]  # the live rating is the last point of the trend
        assert len(r["recent"]) == min(r["games"], 10) + 1
        assert r["trend"] == round(r["recent"][-1] - r["recent"][0], 1)
    ranked = [r["elo"] for r in rows if not r["bound"]]  # a bound is shown, the estimate ranks
    assert ranked == sorted(ranked, reverse=True)
    assert out["los"] is None  # never the n×n table (issue #30): each row's LOS over the next instead
    assert rows[-1]["los_next"] is None  # the last has no next
    for r in rows[:-1]:
        assert 0.0 <= r["los_next"] <= 1.0
        if not r["bound"]:
            assert r["los_next"] >= 0.5  # ranked above the next by the estimate: at least even odds


def test_standings_page_by_place_and_by_bot(client, arena):
    """A page of `limit` rows from `after`, links to the pages either side, and `bot` for the page
    holding a bot's row; the pages put together are the whole table, each row once."""
    whole = client.get("/api/standings", params={"season": "autumn"}).json()
    assert (whole["first"], whole["total"], whole["next_after"], whole["prev_after"]) == (1, 3, None, None)
    top = client.get("/api/standings", params={"season": "autumn", "limit": 2}).json()
    assert [r["bot"] for r in top["rows"]] == [r["bot"] for r in whole["rows"][:2]]
    assert (top["first"], top["total"], top["next_after"], top["prev_after"]) == (1, 3, 2, None)
    rest = client.get("/api/standings", params={"season": "autumn", "limit": 2, "after": 2}).json()
    assert [r["bot"] for r in rest["rows"]] == [whole["rows"][2]["bot"]]
    assert (rest["first"], rest["next_after"], rest["prev_after"]) == (3, None, 0)
    assert rest["rows"][0]["recent"] == whole["rows"][2]["recent"]  # the trend of its own row

    last = whole["rows"][2]
    found = client.get("/api/standings", params={"season": "autumn", "limit": 2, "bot": last["bot"]}).json()
    assert found["first"] == 3 and found["focus"] == f"{last['bot']}@{last['version']}"
    assert found["rows"][0]["bot"] == last["bot"]


def test_standings_refuse_a_bad_page_naming_it(client):
    nobody = client.get("/api/standings", params={"season": "autumn", "bot": "nobody"})
    assert nobody.status_code == 404 and "'nobody'" in nobody.json()["detail"]
    for bad in ({"limit": 501}, {"limit": 0}, {"after": -1}, {"after": "x"}):
        r = client.get("/api/standings", params={"season": "autumn", **bad})
        assert r.status_code == 422 and next(iter(bad)) in r.text


def test_unknown_season_is_a_json_404(client):
    r = client.get("/api/standings", params={"season": "nope"})
    assert r.status_code == 404 and r.json() == {"detail": "no season named 'nope'"}


def test_bot(client, arena):
    bots = client.get("/api/bots").json()
    assert bots == ["alice", "bob", "carol"]
    bob = client.get("/api/bots/bob").json()
    played = [mid for mid, r in arena.records.items() if "bob" in r["names"]]
    assert bob["owner"] == "ben" and [v["number"] for v in bob["versions"]] == [1]
    assert {m["id"] for m in bob["recent"]} == set(played)
    assert sum(h["games"] for h in bob["head_to_head"]) == len(played)
    assert sum(bob["verdicts"].values()) == len(played)
    assert len(bob["history"]) == len(played)  # one rating point per rated match
    assert {r["season"] for r in bob["ratings"]} == {"autumn", "spring"}
    carol = client.get("/api/bots/carol").json()
    assert [v["number"] for v in carol["versions"]] == [1, 2]
    crasher = arena.records[arena.crash_match]["names"][
        1
    ]  # seat 1 crashes (record_support), whoever was paired
    crashes = {n: client.get(f"/api/bots/{n}").json()["verdicts"].get("CRASH", 0) for n in bots}
    assert crashes == {n: int(n == crasher) for n in bots}
    assert bob["opponents"] == len(bob["head_to_head"]) == 2
    assert client.get("/api/bots/zed").status_code == 404


def test_bot_names_page_by_name_with_a_link_to_the_next(client, arena):
    first = client.get("/api/bots", params={"limit": 2})
    assert first.json() == ["alice", "bob"]
    assert first.headers["link"] == '</api/bots?after=bob&limit=2>; rel="next"'
    last = client.get("/api/bots", params={"after": "bob", "limit": 2})
    assert last.json() == ["carol"] and "link" not in last.headers
    assert client.get("/api/bots").headers.get("link") is None
    assert client.get("/api/bots", params={"limit": 1001}).status_code == 422


def test_match_list_filters(client, arena):
    everything = client.get("/api/matches").json()
    assert everything["total"] == 10 and [m["id"] for m in everything["matches"]] == sorted(
        arena.records, reverse=True
    )
    crash = client.get("/api/matches", params={"verdict": "CRASH"}).json()
    assert [m["id"] for m in crash["matches"]] == [arena.crash_match]
    assert crash["matches"][0]["verdicts"] == ["OK", "CRASH"]
    spring = client.get("/api/matches", params={"season": "spring"}).json()
    assert spring["total"] == 3 and all(m["season"] == "spring" for m in spring["matches"])
    alice = client.get("/api/matches", params={"bot": "alice"}).json()
    assert alice["total"] == sum("alice" in r["names"] for r in arena.records.values())
    assert all("alice" in m["bots"] for m in alice["matches"])
    first = client.get("/api/matches", params={"limit": 3}).json()
    page = client.get("/api/matches", params={"limit": 3, "after": first["next_after"]}).json()
    assert first["next_after"] == everything["matches"][2]["id"] and page["total"] == 10
    assert [m["id"] for m in page["matches"]] == [m["id"] for m in everything["matches"][3:6]]
    assert client.get("/api/matches", params={"verdict": "NONSENSE"}).status_code == 422
    assert client.get("/api/matches", params={"limit": 0}).status_code == 422


def test_match_and_its_downloads(client, arena):
    mid = arena.crash_match
    match = client.get(f"/api/matches/{mid}").json()
    assert match["winner"] == 0 and match["verdict_details"][1] == "process exited with code 1"
    assert match["has_replay"] is True and match["rules"] == {"flags": "1"}
    rec = arena.records[mid]["record"]
    public = decode_record(client.get(f"/api/matches/{mid}/record.bin").content)
    assert list(public.deals) == list(rec.deals) and public.result == rec.result and public.seed == rec.seed
    assert [p.name for p in public.players] == list(arena.records[mid]["names"])
    assert [f"{p.name}@{p.version}" for p in public.players] == match["versions"]  # as registered
    js = client.get(f"/api/matches/{mid}/record").json()
    assert js["format"] == "elfern/1" and js["seats"] == match["versions"]
    assert [d["plays"] for d in js["deals"]] == [[p.card for p in d.plays] for d in rec.deals]
    assert [d["deck"] for d in js["deals"]] == [list(d.deck) for d in rec.deals]
    assert client.get("/api/matches/999/record").status_code == 404
    assert client.get("/api/matches/999").status_code == 404


def test_every_download_passes_the_replay_verifier(client, arena):
    from arena.replay.verify import replay_json

    for mid in arena.records:
        record = client.get(f"/matches/{mid}/replay.json").json()
        verified = replay_json(record)  # raises RecordFailure at the first discrepancy
        if mid == arena.crash_match:
            assert verified.verdict["status"] == "CRASH" and verified.verdict["seat"] == 1
        else:
            assert verified.verdict is None and verified.match.over


def test_timeline_api_views(client, arena):
    mid = next(iter(arena.records))
    omni = client.get(f"/api/matches/{mid}/timeline").json()
    seat1 = client.get(f"/api/matches/{mid}/timeline", params={"view": "1"}).json()
    assert omni["perspective"] is None and seat1["perspective"] == 1
    assert omni["deals"][0]["steps"][0]["hands"][0] and seat1["deals"][0]["steps"][0]["hands"][0] is None
    assert client.get(f"/api/matches/{mid}/timeline", params={"view": "2"}).status_code == 422


def test_logs_need_the_owners_token(client, owner_tokens):
    tokens = owner_tokens
    assert client.get("/api/bots/bob/logs").status_code == 401
    assert client.get("/api/bots/bob/logs", headers={"X-Owner-Token": tokens.token("ann")}).status_code == 403
    r = client.get("/api/bots/bob/logs", headers={"Authorization": f"Bearer {tokens.token('ben')}"})
    assert r.status_code == 200
    texts = [log["text"] for log in r.json()["logs"]]
    assert "build of bob v1: ok" in texts
    assert any(t.startswith("bob says hello") or t.startswith("bob log") for t in texts)
    assert not any(t.startswith("alice") or t.startswith("carol") for t in texts)  # only bob's own seat


def test_openapi_documents_the_api(client):
    spec = client.get("/api/openapi.json").json()
    for path in (
        "/api/standings",
        "/api/bots/{name}",
        "/api/bots/{name}/logs",
        "/api/matches",
        "/api/matches/{match_id}/record",
        "/api/matches/{match_id}/record.bin",
        "/api/matches/{match_id}/private-record.bin",
        "/api/matches/{match_id}/timeline",
    ):
        assert path in spec["paths"], path
    assert not any(
        p.startswith("/matches") or p == "/" for p in spec["paths"]
    )  # pages stay out of the API doc
    docs = client.get("/api/docs").text
    assert "swagger" in docs.lower() and "cdn" not in docs  # the page's assets are served here, offline
    assert client.get("/api/docs-assets/swagger-ui-bundle.js").status_code == 200
