"""`arena matches` says what it left out: challenges are counted when the listing leaves them out, and
an empty listing never says "no matches yet" when there are some (the real CLI on a local store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"


@pytest.fixture
def arena(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps tables to the terminal
    for name in ("ARENA_DATABASE_URL", "ARENA_SERVER", "ARENA_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str) -> str:
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    return run


def test_matches_counts_the_challenges_it_leaves_out(arena) -> None:
    assert arena("matches").strip() == "no matches yet"
    for name, owner in (("random", "ann"), ("greedy", "bob")):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", owner, "--sandbox", "local")
    arena("challenge", "random", "greedy", "--deals", "2")
    arena("challenge", "greedy", "random", "--deals", "2")
    empty = arena("matches").strip()
    assert empty == (
        "no matches other than challenges; 2 challenges: `arena matches --kind challenge` lists them"
    )
    by_bot = arena("matches", "--bot", "random", "--status", "queued").strip()
    assert by_bot == (
        "no queued matches for bot random other than challenges; 2 challenges: "
        "`arena matches --kind challenge --bot random --status queued` lists them"
    )
    assert arena("matches", "--kind", "final").strip() == "no final matches"
    listed = arena("matches", "--kind", "challenge")
    assert "random@1 vs greedy@1" in listed and "greedy@1 vs random@1" in listed
    # a listing with rows names the challenges it left out too
    arena("season", "create", "s", "--format", "flags=1")
    arena("season", "start", "s")
    arena("season", "run", "s", "--matches", "1", "--sandbox", "local", "--quiet")
    shown = arena("matches")
    assert "ladder" in shown and "not listed: 2 challenges; `arena matches --kind challenge`" in shown
    assert "not listed" not in arena("matches", "--season", "s")  # a challenge is in no season
    rows = json.loads(arena("matches", "--kind", "challenge", "--json"))["matches"]
    assert [r["bots"] for r in rows] == [["greedy", "random"], ["random", "greedy"]]
    assert [r["versions"] for r in rows] == [["greedy@1", "random@1"], ["random@1", "greedy@1"]]
