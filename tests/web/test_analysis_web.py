"""The solver's marks in the replay viewer: the analyse button, who may press it, and what it stores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from account_support import Site, login, make_site, session_csrf
from analysis_support import recorded_matches

from arena.access.ratelimit import Budget, RateLimiter
from arena.analysis.annotate import annotate_record, mark


@pytest.fixture
def site(tmp_path) -> tuple[Site, list[int]]:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    ids = recorded_matches(url, tmp_path)
    made = make_site(url, tmp_path, limiter=RateLimiter({"analyse": Budget(1, 3600.0)}))
    made.client.app.state.analysis_samples = 2  # the default 16 is for people, not for the suite
    return made, ids


def test_only_a_logged_in_owner_may_analyse_and_everyone_sees_the_result(site) -> None:
    s, (mid, other) = site
    anon = s.new_client()
    page = anon.get(f"/matches/{mid}")
    assert page.status_code == 200 and "Log in</a> to analyse it" in page.text
    assert 'id="analyse-form"' not in page.text
    assert anon.post(f"/matches/{mid}/analyse", data={"csrf": "x"}).status_code == 401

    assert login(s.client, s.tokens["alice"]).status_code == 303
    token = session_csrf(s.client)
    assert 'id="analyse-form"' in s.client.get(f"/matches/{mid}").text
    refused = s.client.post(f"/matches/{mid}/analyse", data={}, follow_redirects=False)
    assert refused.status_code == 403 and "CSRF" in refused.text
    assert not (Path(s.home) / "analyses" / f"{mid}.json").exists()

    done = s.client.post(f"/matches/{mid}/analyse", data={"csrf": token}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == f"/matches/{mid}#analysis"
    stored = json.loads((Path(s.home) / "analyses" / f"{mid}.json").read_text())
    record = s.client.get(f"/api/matches/{mid}/record").json()
    assert stored == annotate_record(record, samples=2, seed=0)  # what `arena replay analyse` gives

    # Everyone now sees each move's mark, best cards and loss, deal by deal.
    shown = anon.get(f"/matches/{mid}?deal=1&step=3").text
    first = stored["deals"][0]["moves"]
    rows = re.findall(r'<tr data-play="(\d+)" class="([a-z ]+)">.*?<td class="mark">([^<]*)</td>', shown)
    assert [int(p) for p, _, _ in rows[: len(first)]] == [mv["play"] for mv in first]
    assert [m for _, _, m in rows[: len(first)]] == [mark(mv) for mv in first]
    assert "current" in rows[2][1] and "Analyse this match" not in shown
    assert len(re.findall(r'class="analysis-deal"', shown)) == len(stored["deals"])

    # Asking again is free (stored once), another match is over the budget of 1 an hour.
    again = s.client.post(f"/matches/{mid}/analyse", data={"csrf": token}, follow_redirects=False)
    assert again.status_code == 303
    busy = s.client.post(f"/matches/{other}/analyse", data={"csrf": token}, follow_redirects=False)
    assert busy.status_code == 429 and "Retry-After" in busy.headers
    assert not (Path(s.home) / "analyses" / f"{other}.json").exists()


def test_one_analysis_runs_at_a_time_and_a_long_match_is_refused(tmp_path, monkeypatch) -> None:
    """The solver's CPU: while an analysis runs in this process another is 429 with Retry-After, and a
    match over `MAX_DEALS` deals is 422 naming the way out; neither stores anything."""
    from arena.web import analysis

    url = f"sqlite:///{tmp_path / 'arena.db'}"
    mid, other = recorded_matches(url, tmp_path)
    s = make_site(url, tmp_path, limiter=RateLimiter({"analyse": Budget(10, 3600.0)}))
    s.client.app.state.analysis_samples = 2
    assert login(s.client, s.tokens["alice"]).status_code == 303
    token = session_csrf(s.client)
    with analysis._running:  # another analysis holds the process's one place
        busy = s.client.post(f"/matches/{mid}/analyse", data={"csrf": token}, follow_redirects=False)
    assert busy.status_code == 429 and busy.headers["Retry-After"] == str(analysis.BUSY_RETRY_S)
    assert "another analysis is running" in busy.text
    monkeypatch.setattr(analysis, "MAX_DEALS", 0)  # the one-deal match is now over the limit
    long = s.client.post(f"/matches/{other}/analyse", data={"csrf": token}, follow_redirects=False)
    assert (
        long.status_code == 422 and "more than 0 deals: analyse it with `arena replay analyse`" in long.text
    )
    assert not list((tmp_path / "analyses").glob("*.json"))


def test_sealed_and_unfinished_matches_are_refused(sealed_builder, tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'sealed.db'}"
    sealed = sealed_builder(url, tmp_path)
    s = make_site(url, tmp_path)
    assert login(s.client, s.tokens["bob"]).status_code == 303
    token = session_csrf(s.client)
    hidden = s.client.post(
        f"/matches/{sealed.sealed_done}/analyse", data={"csrf": token}, follow_redirects=False
    )
    assert hidden.status_code == 403
    running = s.client.post(
        f"/matches/{sealed.running}/analyse", data={"csrf": token}, follow_redirects=False
    )
    assert running.status_code == 409 and "not finished" in running.text
    assert s.client.post("/matches/999999/analyse", data={"csrf": token}).status_code == 404
    for bad in ("abc", "-1", "9" * 40, "1%00", "..%2F1"):  # hostile ids: a named refusal, never a 500
        assert s.client.post(f"/matches/{bad}/analyse", data={"csrf": token}).status_code in (404, 422), bad
    assert s.client.post(f"/matches/{sealed.running}/analyse", data={"csrf": "x" * 5000}).status_code == 403
    assert not (tmp_path / "analyses").exists()
