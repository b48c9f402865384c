"""`arena bots house`: one command gives a fresh arena opponents, the sample bots filed under the house,
locally or on a server with the admin token (an owner's token is refused)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from remote_support import Server, ok
from service_support import ADMIN

from arena.cli import cli


def test_house_bots_into_a_fresh_local_store(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    for name in ("ARENA_DATABASE_URL", "ARENA_SERVER", "ARENA_API_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    run = CliRunner().invoke
    done = run(cli, ["bots", "house", "--sandbox", "local"])
    assert done.exit_code == 0, done.output
    assert "house bots: random, greedy, tactician" in done.output
    rows = json.loads(run(cli, ["bots", "list", "--json"]).output)
    assert {(r["name"], r["owner"]) for r in rows} == {
        ("random", "house"),
        ("greedy", "house"),
        ("tactician", "house"),
    }
    again = run(cli, ["bots", "house", "--sandbox", "local"])  # harmless: same content, nothing new
    assert again.exit_code == 0 and again.output.count("unchanged") == 3
    bad = run(cli, ["bots", "house", "nobody", "--sandbox", "local"])
    assert (
        bad.exit_code == 2 and "no sample bot named nobody; the house bots are greedy, ismcts" in bad.output
    )


def test_house_bots_onto_a_server_need_the_admin_token(server: Server) -> None:
    refused = server.run("bots", "house", "random", token=server.tokens["alice"])
    assert refused.returncode == 2 and "PERMISSION_DENIED" in refused.stderr, refused.stderr
    none = server.run("bots", "house", "greedy")
    assert none.returncode == 2 and "admin token" in none.stderr
    assert "house bots: greedy" in ok(server.run("bots", "house", "greedy", token=ADMIN))
    assert json.loads(ok(server.run("bots", "show", "greedy", "--json")))["owner"] == "house"
