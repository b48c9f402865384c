"""The CLI's `--json` documents use the HTTP API's field names (arena/web/schemas.py): the same thing
has the same name in both. Each CLI document may carry a few keys the API has not (named in the CLI
module beside the document); every other key must be the API's, and the API's keys must be there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import cli
from arena.cli.matches import CLI_ONLY_KEYS, match_row
from arena.cli.standings import CLI_ONLY_ROW_KEYS
from arena.proto import arena_pb2 as pb
from arena.web import schemas

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bots" / "python"


def fields(model: type) -> set[str]:
    return set(model.model_fields)


@pytest.fixture
def arena(tmp_path, monkeypatch):
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    for name in ("ARENA_DATABASE_URL", "ARENA_SERVER", "ARENA_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)

    def run(*args: str):
        result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return json.loads(result.output) if "--json" in args else result.output

    return run


def test_a_match_row_is_keyed_as_the_apis_match() -> None:
    row = match_row(
        pb.MatchInfo(id=7, kind="ladder", status="done", players=["ann@1", "bob@2"], revealed=True)
    )
    api = fields(schemas.MatchOut)
    # the API's match has per-seat deal counts, rules, a duration and the replay's state; the CLI's
    # listing (ListMatches) has none of those
    assert set(row) - CLI_ONLY_KEYS <= api
    assert fields(schemas.MatchSummary) - {"deals"} <= set(row)
    assert row["bots"] == ["ann", "bob"] and row["versions"] == ["ann@1", "bob@2"]
    assert "players" not in row and "details" not in row


def test_listing_documents_are_keyed_as_the_api(arena) -> None:
    for name, owner in (("random", "ann"), ("greedy", "bob")):
        arena("bots", "submit", str(SAMPLES / name), "--name", name, "--owner", owner, "--sandbox", "local")
    arena("season", "create", "s", "--format", "flags=1")
    arena("season", "start", "s")
    arena("season", "run", "s", "--matches", "2", "--sandbox", "local", "--quiet")

    page = arena("matches", "--json")
    assert set(page) == fields(schemas.MatchPage)
    seasons = arena("season", "list", "--json")
    assert set(seasons[0]) - {"time"} == fields(schemas.SeasonOut)  # `time`: the clocks, CLI only
    assert seasons[0]["matches"] == 2

    shown = arena("bots", "show", "random", "--json")
    version = shown["versions"][0]
    assert fields(schemas.VersionOut) <= set(version) and set(version) - fields(schemas.VersionOut) == {
        "build_log",
        "path",
    }
    assert {"name", "owner", "retired", "suspended", "suspension_reason", "versions"} <= set(shown)

    logs = arena("bots", "logs", "random", "--json")
    assert set(logs) & fields(schemas.LogsOut) == {"bot"} and logs["bot"] == "random"
    assert set(logs) - fields(schemas.LogsOut) == {"builds", "matches"}  # the API's `logs`, split in two

    arena("owners", "add", "carol")
    owners = arena("owners", "list", "--json")  # /api/owners answers the same OwnerInfo, by its names
    assert set(owners[0]) == {f.name for f in pb.OwnerInfo.DESCRIPTOR.fields}

    standings = arena("standings", "s", "--json")
    assert "rows" in standings and {"first", "total", "next_after"} <= fields(schemas.StandingsOut)
    row = standings["rows"][0]
    api_row = fields(schemas.StandingRow)
    assert set(row) - CLI_ONLY_ROW_KEYS <= api_row
    assert api_row - {"trend", "recent"} <= set(row)  # trend and recent: the web's sparkline, not the CLI's
    assert row["bot"] in ("random", "greedy") and row["label"] == f"{row['bot']}@1" and row["version"] == 1
