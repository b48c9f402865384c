"""The ladder commands as a user types them: bots, season, standings, compare (real referee, sample bots)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"


def test_bots_submit_list_show_retire(arena, tmp_path) -> None:
    out = arena(
        "bots", "submit", str(SAMPLES / "random"), "--name", "rnd", "--owner", "ann", "--sandbox", "local"
    ).output
    assert "submitted rnd@1" in out
    assert (
        "unchanged"
        in arena(
            "bots", "submit", str(SAMPLES / "random"), "--name", "rnd", "--owner", "ann", "--sandbox", "local"
        ).output
    )
    archive = tmp_path / "greedy.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(SAMPLES / "greedy", arcname="greedy")
    assert (
        "submitted grd@1"
        in arena(
            "bots", "submit", str(archive), "--name", "grd", "--owner", "bob", "--sandbox", "local"
        ).output
    )
    rows = json.loads(arena("bots", "list", "--json").output)
    assert [(r["name"], r["owner"], r["version"], r["state"]) for r in rows] == [
        ("grd", "bob", 1, "active"),
        ("rnd", "ann", 1, "active"),
    ]
    shown = json.loads(arena("bots", "show", "grd", "--json").output)
    assert shown["versions"][0]["language"] == "python" and len(shown["versions"][0]["content_hash"]) == 64
    page = arena("bots", "list", "--json", "--limit", "1")
    assert [r["name"] for r in json.loads(page.stdout)] == ["grd"]
    assert page.stderr.strip() == "more: arena bots list --after grd"
    rest = arena("bots", "list", "--json", "--after", "grd")
    assert [r["name"] for r in json.loads(rest.stdout)] == ["rnd"] and not rest.stderr
    arena("bots", "retire", "grd")
    assert [r["name"] for r in json.loads(arena("bots", "list", "--json").output)] == ["rnd"]


def test_user_mistakes_are_one_line(arena, tmp_path) -> None:
    arena("bots", "submit", str(SAMPLES / "random"), "--name", "rnd", "--owner", "ann", "--sandbox", "local")
    cases = [
        (
            (
                "bots",
                "submit",
                str(SAMPLES / "greedy"),
                "--name",
                "rnd",
                "--owner",
                "eve",
                "--sandbox",
                "local",
            ),
            "belongs to 'ann'",
        ),
        (("bots", "show", "nobody"), "no bot named 'nobody'"),
        (("season", "create", "x", "--format", "flags=zero"), "--format 'flags=zero'"),
        (("season", "create", "x", "--rules", "standoff=triple"), "standoff='triple' is invalid"),
        (("season", "create", "x", "--time", "move=fast"), "--time"),
        (("season", "start", "nope"), "no season named 'nope'"),
        (("season", "run", "nope", "--matches", "2", "--until-stable"), "exactly one goal"),
        (("compare", "rnd", "ghost"), "no bot named 'ghost'"),
    ]
    for args, message in cases:
        result = arena(*args, ok=False)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output


def test_failed_build_is_reported_and_kept(arena, tmp_path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "bot.toml").write_text(
        'name = "bad"\nrun = ["./bot"]\nbuild = ["sh", "-c", "echo cc: syntax error; exit 1"]\n'
    )
    result = arena(
        "bots", "submit", str(bad), "--name", "bad", "--owner", "o", "--sandbox", "local", ok=False
    )
    assert result.exit_code == 2 and "build FAILED" in result.output and "syntax error" in result.output
    shown = arena("bots", "show", "bad").output
    assert "BUILD FAILED" in shown and "syntax error" in shown and "build_failed" in shown
    # The failed build is shown from its first error line, with the command for the whole log.
    assert "The first error lines of its build log (" in shown and "arena bots show bad --json" in shown


def test_season_lifecycle_with_real_matches(arena, tmp_path) -> None:
    for name, owner in (("random", "ann"), ("greedy", "bob")):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", owner, "--sandbox", "local")
    assert (
        "draft"
        in arena(
            "season",
            "create",
            "s",
            "--format",
            "flags=1",
            "--duplicate",
            "--time",
            "move=2s,bank=20s",
            "--seed",
            "4",
        ).output
    )
    assert "2 bots" in arena("season", "start", "s").output
    assert (
        "played 4 matches"
        in arena(
            "season", "run", "s", "--matches", "4", "--concurrency", "2", "--sandbox", "local", "--quiet"
        ).output
    )
    data = json.loads(arena("standings", "s", "--json", "--los").output)
    assert data["status"] == "running" and len(data["rows"]) == 2
    # an interval, or (4-0) a marked bound instead of one
    assert all(
        r["games"] == 4 and ((r["interval"] or 0) > 0) != bool(r["bound"]) and r["provisional"]
        for r in data["rows"]
    )
    assert len(data["los"]["matrix"]) == 2
    table = arena("standings").output  # the newest running season by default
    assert "±95%" in table and "random@1" in table and "provisional" in table
    assert "equals" in arena("season", "verify", "s").output
    logs = arena("bots", "logs", "greedy", "--last", "3").output
    assert logs.count("(greedy@1, seat") == 3 and "random@1" not in logs  # only its own seat
    out = arena("season", "export", "s").output
    assert "4 replays" in out and len(list((tmp_path / "home" / "replays" / "s").glob("*.replay"))) == 4
    assert "closed and frozen" in arena("season", "close", "s", "--sandbox", "local", "--quiet").output
    frozen = json.loads(arena("standings", "s", "--json").output)
    assert frozen["status"] == "frozen" and sum(r["games"] for r in frozen["rows"]) == 2 * (4 + 2)
    seasons = json.loads(arena("season", "list", "--json").output)
    assert seasons[0]["status"] == "frozen" and seasons[0]["matches"] == 6


def test_compare_decides_by_sprt(arena) -> None:
    for name, owner in (("random", "ann"), ("tactician", "bob")):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", owner, "--sandbox", "local")
    data = json.loads(
        arena(
            "compare",
            "tactician",
            "random",
            "--elo1",
            "100",
            "--max-pairs",
            "20",
            "--seed",
            "1",
            "--sandbox",
            "local",
            "--concurrency",
            "2",
            "--json",
        ).stdout
    )
    assert data["verdict"] == "H1" and data["llr"] >= data["bounds"][1]
    assert data["elo"] > 100 and data["elo_ci95"][0] > 0
    assert sum(data["pentanomial"]) == data["pairs"] >= 2


def test_season_run_whose_matches_fail_exits_4_and_says_why(arena, tmp_path) -> None:
    """A bot whose bundle is gone from disk and from the store cannot be played: every match fails
    its three attempts and is given up; the run says so and exits 4, never "played 0 matches", 0."""
    import shutil
    import sqlite3

    for name, owner in (("random", "ann"), ("greedy", "bob")):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", owner, "--sandbox", "local")
    arena("season", "create", "s", "--format", "flags=1")
    arena("season", "start", "s")
    digest = json.loads(arena("bots", "show", "random", "--json").output)["versions"][0]["content_hash"]
    shutil.rmtree(tmp_path / "home" / "bundles" / digest)
    with sqlite3.connect(tmp_path / "home" / "arena.db") as db:
        db.execute("DELETE FROM bundle_blobs WHERE content_hash = ?", (digest,))
    args = ("season", "run", "s", "--matches", "2", "--concurrency", "1", "--sandbox", "local", "--quiet")
    result = arena(*args, ok=False)
    assert result.exit_code == 4, result.output
    assert "played 0 matches" in result.output
    assert "failed to play 3 times each and were given up" in result.output
    assert "no stored copy" in result.output  # the first reason
    assert "arena matches --season s --status failed" in result.output
    assert "Exit codes:" in arena("season", "run", "--help").output


def test_season_run_until_stable_exits_5_at_the_cap_then_settles_on_its_defaults(arena) -> None:
    """Stopped by its --max-matches cap, --until-stable says who is not settled and how to continue,
    and exits 5; the same command on its defaults then plays on until the season is settled."""
    for name, owner in (("random", "ann"), ("greedy", "bob")):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", owner, "--sandbox", "local")
    arena("season", "create", "s", "--format", "flags=1", "--duplicate", "--seed", "5")
    arena("season", "start", "s")
    args = ("season", "run", "s", "--until-stable", "--concurrency", "2", "--sandbox", "local", "--quiet")
    capped = arena(*args, "--max-matches", "4", ok=False)
    assert capped.exit_code == 5, capped.output
    assert "reached --max-matches 4 with 2 bot(s) not settled" in capped.output
    assert "random@1: provisional 4/20" in capped.output and "a higher --max-matches" in capped.output
    settled = arena(*args)
    assert "season s is settled" in settled.output
    rows = json.loads(arena("standings", "s", "--json").output)["rows"]
    assert all(not r["provisional"] for r in rows)
    assert "5    --until-stable reached --max-matches" in arena("season", "run", "--help").output
