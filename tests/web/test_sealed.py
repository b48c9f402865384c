"""Unfinished matches reveal nothing: no seed, salt, result or replay on any route until the match
and its duplicate twin are both over; then seed, salt and commitment are public and check out."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from arena.engine import check_commitment

REPLAY_ROUTES = (
    "/api/matches/{id}/record",
    "/api/matches/{id}/record?download=true",
    "/api/matches/{id}/record.bin",
    "/api/matches/{id}/timeline",
    "/api/matches/{id}/timeline?view=0",
    "/api/matches/{id}/timeline?view=1",
    "/matches/{id}/replay.json",
    "/matches/{id}",
    "/matches/{id}?deal=1&step=3&view=0",
)


def _state(sealed, which: str) -> int:
    return {"twin running": sealed.sealed_done, "running": sealed.running, "queued": sealed.queued[0]}[which]


@pytest.mark.parametrize("which", ["twin running", "running", "queued"])
@pytest.mark.parametrize("route", REPLAY_ROUTES)
def test_replay_routes_refuse_an_unrevealed_match(sealed_client, sealed, route, which):
    mid = _state(sealed, which)
    r = sealed_client.get(route.format(id=mid))
    assert r.status_code == 403, r.text[:300]
    why = (
        f"match {mid} is over but its duplicate twin is not: its replay is published when both have finished"
        if which == "twin running"
        else f"match {mid} is not over: its replay is published when it and its duplicate twin have finished"
    )
    text = r.json()["detail"] if route.startswith("/api") else r.text
    assert why in text
    assert str(sealed.seeds[mid]) not in r.text and "ELFREC" not in r.text


@pytest.mark.parametrize("route", REPLAY_ROUTES)
def test_replay_routes_serve_a_revealed_match(sealed_client, sealed, route):
    for mid in sealed.revealed:
        r = sealed_client.get(route.format(id=mid))
        assert r.status_code == 200, r.text[:300]


def test_match_api_before_reveal_shows_seats_status_and_commitment_only(sealed_client, sealed):
    from arena.store import Store
    from arena.store.models import Match

    store = Store.open(sealed.url, home=sealed.home)
    with store.read() as s:
        stored = {mid: (s.get(Match, mid).commitment, s.get(Match, mid).status) for mid in sealed.seeds}
    store.close()
    for mid in sealed.unrevealed:
        out = sealed_client.get(f"/api/matches/{mid}").json()
        assert out["revealed"] is False and out["sealed"]
        assert (out["commitment"], out["status"]) == stored[mid] and len(out["commitment"]) == 64
        assert out["seed"] is None and out["salt"] is None and out["has_replay"] is False
        assert out["winner"] is None and out["verdicts"] == [] and out["lines"] == []
        assert out["verdict_details"] == [] and out["deals"] == 0 and out["duration"] is None
        assert set(out["versions"]) == {"impostor@1", "honest@1"}
    assert sealed_client.get(f"/api/matches/{sealed.sealed_done}").json()["status"] == "done"
    for mid in sealed.unrevealed:  # the page shows the public facts, with the 403
        page = sealed_client.get(f"/matches/{mid}")
        assert page.status_code == 403 and stored[mid][0] in page.text and 'class="tag sealed"' in page.text
        assert (
            'id="board"' not in page.text and "replay.json" not in page.text and "record.bin" not in page.text
        )


def test_match_api_after_reveal_shows_seed_salt_and_a_commitment_that_checks(sealed_client, sealed):
    for mid in sealed.revealed:
        out = sealed_client.get(f"/api/matches/{mid}").json()
        assert out["revealed"] is True and out["sealed"] is None and out["has_replay"] is True
        assert out["seed"] == sealed.seeds[mid] and out["commitment_id"] == f"m{mid}"
        assert check_commitment(
            out["commitment"], out["seed"], out["commitment_id"], bytes.fromhex(out["salt"])
        )
        assert not check_commitment(
            out["commitment"], out["seed"] + 1, out["commitment_id"], bytes.fromhex(out["salt"])
        )
        assert len(out["verdicts"]) == 2 and len(out["lines"]) == 2


def test_lists_keep_an_unrevealed_result_hidden(sealed_client, sealed):
    listing = sealed_client.get("/api/matches", params={"season": "winter"}).json()
    rows = {m["id"]: m for m in listing["matches"]}
    assert set(rows) == {*sealed.revealed, sealed.sealed_done}  # finished matches; queued/running not listed
    hidden = rows[sealed.sealed_done]
    assert hidden["revealed"] is False and hidden["winner"] is None and hidden["verdicts"] == []
    assert hidden["lines"] == [] and hidden["finished_at"] is None
    # filtering by verdict would tell a withheld verdict: sealed matches never match a verdict filter
    ok = sealed_client.get("/api/matches", params={"verdict": "OK"}).json()
    assert sealed.sealed_done not in {m["id"] for m in ok["matches"]} and ok["total"] == 2
    assert sealed_client.get("/api/matches", params={"verdict": "CRASH"}).json()["total"] == 1
    page = sealed_client.get("/matches").text
    assert f'href="/matches/{sealed.sealed_done}"' in page and 'class="tag sealed"' in page
    assert '<option value="OK">' in page  # verdict filter options come from revealed matches
    for name in ("impostor", "honest"):
        bot = sealed_client.get(f"/api/bots/{name}").json()
        assert sum(h["games"] for h in bot["head_to_head"]) == 2  # the revealed pair only
        assert sum(bot["verdicts"].values()) == 2
        assert sealed.sealed_done not in {p["match_id"] for p in bot["history"]}
        recent = {m["id"]: m for m in bot["recent"]}
        assert (
            recent[sealed.sealed_done]["revealed"] is False and recent[sealed.sealed_done]["winner"] is None
        )


def test_the_twin_is_revealed_once_both_are_over(tmp_path, owner_tokens, sealed_builder):
    """Record the running twin: both matches of the pair become public, seeds and replays included."""
    from arena.ladder.record import record_result
    from arena.store import MatchResult, Store
    from arena.web.app import create_app

    sealed = sealed_builder(f"sqlite:///{tmp_path / 'arena.db'}", tmp_path)
    pair = (sealed.sealed_done, sealed.running)
    with TestClient(create_app(sealed.url, sealed.home, tokens=owner_tokens)) as client:
        for mid in pair:
            assert client.get(f"/api/matches/{mid}/record").status_code == 403
            assert client.get(f"/api/matches/{mid}").json()["seed"] is None
        store = Store.open(sealed.url, home=sealed.home)
        done = MatchResult(winner=None, void=False, verdicts=("OK", "OK"), replay=b"", logs=("", ""))
        assert record_result(store, "test-runner", sealed.running, done).recorded
        store.close()
        for mid in pair:
            out = client.get(f"/api/matches/{mid}").json()
            assert out["revealed"] is True and out["seed"] == sealed.seeds[mid]
        assert client.get(f"/api/matches/{sealed.sealed_done}/record").status_code == 200
        assert client.get(f"/api/matches/{sealed.running}/record").status_code == 404  # recorded without one
        assert client.get(f"/matches/{sealed.sealed_done}").status_code == 200
        for mid in sealed.queued:
            assert client.get(f"/api/matches/{mid}/timeline").status_code == 403


def test_unknown_match_is_a_404_everywhere(sealed_client):
    for route in REPLAY_ROUTES:
        assert sealed_client.get(route.format(id=999)).status_code == 404, route
    assert sealed_client.get("/api/matches/999/private-record.bin").status_code == 404
