"""The ladder explains itself: draft standings in one line, a season whose bots may not meet says why
(naming the owner and the option) and exits non-zero, and the options' defaults are in --help."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"


def test_standings_of_a_season_without_games_is_one_line(arena) -> None:
    arena("season", "create", "d")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning may leak
        out = arena("standings", "d")
    assert out.output.strip() == "d (draft): no rated games yet; 0 bots entered"
    assert out.stderr_bytes in (None, b"")
    data = json.loads(arena("standings", "d", "--json").output)
    assert data["rows"] == [] and data["groups"] == [] and data["comparable"]


def test_one_owners_bots_never_meet_and_the_run_says_why(arena) -> None:
    assert "[default: no-pair-same-owner]" in " ".join(
        arena("season", "create", "--help").output.replace("-\n", "-").split()
    ).replace("- ", "-")
    for name in ("random", "greedy"):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", "ann", "--sandbox", "local")
    arena("season", "create", "s")
    assert "2 bots" in arena("season", "start", "s").output
    run = arena("season", "run", "s", "--matches", "2", "--sandbox", "local", "--quiet", ok=False)
    assert run.exit_code == 2
    assert "'ann'" in run.output and "--pair-same-owner" in run.output and "played 0" not in run.output
    data = json.loads(arena("standings", "s", "--json").output)
    assert sorted(data["unrated"]) == ["greedy@1", "random@1"]
    assert all(r["rank"] == 0 and r["elo"] is None and not r["rated"] for r in data["rows"])
    out = arena("standings", "s").output
    assert out.strip() == "s (running): no rated games yet; 2 bots entered"


def test_bad_anchors_are_refused_in_one_line(arena) -> None:
    for bad in ("random", "random=strong", "=1000", "random=inf"):
        out = arena("season", "create", "x", "--anchor", bad, ok=False)
        assert out.exit_code == 2 and "NAME=ELO" in out.output and "Traceback" not in out.output
    out = arena("season", "create", "x", "--anchor", "random=1000", "--pair-same-owner")
    assert "anchor random=1000" in out.output and "one owner's bots may meet" in out.output


def test_bench_ratings_reports_iterations_and_steadiness(arena) -> None:
    out = arena(
        "bench", "ratings", "--bots", "20", "--matches", "2000", "--no-large", "--no-spread", "--json"
    )
    data = json.loads(out.output)
    assert data["fit_newton_iterations"] >= 2 and data["max_abs_diff_elo"] < 1.0
    steady = data["steadiness"]
    assert steady["runs"] == 8 and 0 < steady["min_s"] <= steady["median_s"] <= steady["max_s"]
