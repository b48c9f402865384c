"""The CLI as a client: real `python -m arena.cli` processes talk to a real Arena gRPC service on loopback.

Each CLI process gets ARENA_SERVER / ARENA_API_TOKEN and an empty ARENA_HOME of its own, so nothing
it prints can come from a local store (the tests also check that it never creates one).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
from pathlib import Path

import grpc
from click.testing import CliRunner
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from remote_support import RANDOM, WRONG, Server, ok, one_line_error
from service_support import ADMIN, build_bundle, bundle_archive, gated_build, serve_in_thread

from arena.access.admin import AdminToken
from arena.access.owners import add_owner
from arena.access.ratelimit import Budget, RateLimiter
from arena.replay.export import record_to_json
from arena.service.core import Service
from arena.service.grpc_servicer import add_arena_service
from arena.store import Store
from arena.store.models import Season


def test_owner_submits_lists_shows_and_reads_only_own_logs(server: Server) -> None:
    alice, bob = server.tokens["alice"], server.tokens["bob"]
    out = ok(server.run("bots", "submit", str(RANDOM), "--name", "alicebot", token=alice))
    assert "submitted alicebot@1 (python" in out and server.address in out
    again = ok(server.run("bots", "submit", str(RANDOM), "--name", "alicebot", token=alice))
    assert "alicebot@1 unchanged" in again
    # a folder packed by the CLI hashes like a local submission of the same folder would
    from arena.store.bundles import content_hash

    listed = json.loads(ok(server.run("bots", "list", "--json")))
    assert listed == [
        {
            "name": "alicebot",
            "owner": "alice",
            "version": 1,
            "language": "python",
            "state": "active",
            "hash": content_hash(RANDOM)[:12],
        }
    ]
    assert listed == json.loads(ok(server.local("bots", "list", "--json")))  # the local command's rows
    assert "alicebot" in ok(server.run("bots", "list"))

    mine = json.loads(ok(server.run("bots", "show", "alicebot", "--json", token=alice)))
    theirs = json.loads(ok(server.run("bots", "show", "alicebot", "--json", token=bob)))
    assert mine["versions"][0]["build_log"] is not None and mine["versions"][0]["build_ok"]
    assert theirs["versions"][0]["build_log"] is None  # a build log is its owner's
    assert set(mine) >= {"name", "owner", "retired", "suspended", "suspension_reason", "versions", "notices"}
    assert mine["versions"][0]["path"] is None  # the server's paths stay on the server

    logs = json.loads(ok(server.run("bots", "logs", "alicebot", "--json", token=alice)))
    assert logs["bot"] == "alicebot" and [b["version"] for b in logs["builds"]] == [1]
    assert "no recorded match logs yet" in ok(server.run("bots", "logs", "alicebot", token=alice))
    one_line_error(
        server.run("bots", "logs", "alicebot", token=bob),
        "PERMISSION_DENIED",
        "only to its owner and the admin",
    )
    one_line_error(server.run("bots", "logs", "alicebot"), "PERMISSION_DENIED", "no API token was sent")
    one_line_error(server.run("bots", "retire", "alicebot", token=bob), "PERMISSION_DENIED")
    one_line_error(
        server.run("bots", "submit", str(RANDOM), "--name", "alicebot", token=bob),
        "PERMISSION_DENIED",
        "belongs to another owner",
    )
    one_line_error(
        server.run("bots", "submit", str(RANDOM), "--name", "-bad", token=alice), "INVALID_ARGUMENT", "name"
    )
    one_line_error(server.run("bots", "show", "nobody"), "NOT_FOUND", "nobody")
    assert "alicebot retired" in ok(server.run("bots", "retire", "alicebot", token=alice))
    assert json.loads(ok(server.run("bots", "list", "--json"))) == []
    assert json.loads(ok(server.run("bots", "list", "--all", "--json")))[0]["state"] == "retired"


def test_wrong_token_and_unreachable_server_are_one_line(server: Server) -> None:
    line = one_line_error(server.run("bots", "list", token=WRONG), "UNAUTHENTICATED", "elf_xxxx…")
    assert WRONG not in line and "WRONG" not in line  # only the token's first 8 characters
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{sock.getsockname()[1]}"
    for args in (("bots", "list"), ("standings",), ("matches",), ("watch", "1")):
        one_line_error(
            server.run(*args, server=closed), f"cannot reach arena server {closed}", "connection refused"
        )
    one_line_error(server.run("bots", "list", server="no-port-here"), "HOST:PORT")
    # TLS asked of a plain-text server fails in one line too
    ca = server.client_home / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    tls = server.run("bots", "list", "--tls-ca", str(ca))
    assert tls.returncode == 2 and len(tls.stderr.strip().splitlines()) == 1 and "Traceback" not in tls.stderr
    # commands of the local store only refuse while ARENA_SERVER is set (no stray local store, no dud token)
    for args in (("season", "run", "s", "--matches", "1"),):
        one_line_error(server.run(*args, token=ADMIN), "works on the local store only", "ARENA_SERVER is set")
    # an --api-token given without a server is a mistake, not silently ignored
    local = server.run("bots", "list", "--api-token", "elf_abc", server="")
    one_line_error(local, "--api-token is only used with --server")


def test_admin_runs_seasons_and_owners_challenge_matches_and_standings(server: Server) -> None:
    alice, bob = server.tokens["alice"], server.tokens["bob"]
    ok(server.run("bots", "submit", str(RANDOM), "--name", "alicebot", token=alice))
    ok(server.run("bots", "submit", str(RANDOM), "--name", "bobbot", token=bob))

    # the organiser, remotely
    one_line_error(server.run("season", "create", "s1", token=alice), "PERMISSION_DENIED", "admin token")
    one_line_error(server.run("season", "create", "s1", "--seed", "3", token=ADMIN), "--seed")
    made = ok(
        server.run("season", "create", "s1", "--format", "flags=1", "--time", "move=1s,bank=5s", token=ADMIN)
    )
    assert "season s1 created (draft)" in made
    one_line_error(server.run("season", "create", "s1", token=ADMIN), "FAILED_PRECONDITION")
    # anchors and the same-owner option travel in CreateSeason too
    made = ok(
        server.run(
            "season", "create", "anchored", "--anchor", "bobbot=1000", "--pair-same-owner", token=ADMIN
        )
    )
    assert "anchor bobbot=1000" in made and "one owner's bots may meet" in made
    with server.service.store.read() as s:
        options = s.scalar(select(Season.options).where(Season.name == "anchored"))
    assert options == {"anchors": {"bobbot": 1000.0}, "pair_same_owner": True}
    one_line_error(
        server.run("season", "create", "bad", "--anchor", "../x=1000", token=ADMIN),
        "INVALID_ARGUMENT",
        "anchors",
    )
    assert "season s1 running with 2 bots" in ok(server.run("season", "start", "s1", token=ADMIN))
    one_line_error(server.run("season", "start", "nope", token=ADMIN), "NOT_FOUND")
    remote_seasons = json.loads(ok(server.run("season", "list", "--json")))
    assert remote_seasons == json.loads(ok(server.local("season", "list", "--json")))
    owners = json.loads(ok(server.run("owners", "list", "--json", token=ADMIN)))
    assert [(o["name"], o["token_prefix"]) for o in owners] == [
        ("alice", alice[:8]),
        ("bob", bob[:8]),
    ]
    assert owners == json.loads(ok(server.local("owners", "list", "--json")))  # never rotated: equal
    assert alice not in ok(server.run("owners", "list", token=ADMIN))
    one_line_error(server.run("owners", "list", token=alice), "PERMISSION_DENIED")
    # the organiser manages owners remotely too; an owner may not
    for args in (("owners", "add", "carol"), ("owners", "rotate", "bob"), ("owners", "revoke", "bob")):
        one_line_error(server.run(*args, token=alice), "PERMISSION_DENIED")
    carol = ok(server.run("owners", "add", "carol", token=ADMIN)).strip().splitlines()[-1]
    assert carol.startswith("elf_")
    assert (
        json.loads(ok(server.run("bots", "list", "--json", token=carol))) is not None
    )  # the new token works
    one_line_error(server.run("owners", "add", "carol", token=ADMIN), "FAILED_PRECONDITION", "exists")
    assert "revoked the token of carol" in ok(server.run("owners", "revoke", "carol", token=ADMIN))
    one_line_error(server.run("bots", "list", token=carol), "elf_")  # refused, named by its first characters
    again = ok(server.run("owners", "rotate", "carol", token=ADMIN)).strip().splitlines()[-1]
    assert again.startswith("elf_") and again != carol
    assert [
        o for o in json.loads(ok(server.run("owners", "list", "--json", token=ADMIN))) if o["name"] == "carol"
    ][0]["rotated_at"]

    # the server's workers would play the season; here the organiser's shell plays two matches
    played = server.local("season", "run", "s1", "--matches", "2", "--sandbox", "local", "--quiet")
    assert "played 2 matches" in ok(played)

    remote = json.loads(ok(server.run("standings", "s1", "--json", "--los")))
    local = json.loads(ok(server.local("standings", "s1", "--json", "--los")))
    assert set(remote) == set(local) and remote["season"] == "s1" and remote["status"] == "running"
    assert remote["rows"] == local["rows"] and len(remote["rows"]) == 2
    assert sum(r["games"] for r in remote["rows"]) == 4
    assert remote == local and len(local["los"]["matrix"]) == 2  # the LOS matrix too: one document
    assert "likelihood of superiority" in ok(server.run("standings", "s1", "--los"))
    assert "alicebot@1" in ok(server.run("standings"))  # the running season by default

    # challenges: owned, unrated, listed apart, rate-limited
    queued = ok(server.run("challenge", "alicebot", "bobbot", "--deals", "3", token=alice))
    assert "challenge queued: match" in queued and "alicebot@1 vs bobbot@1" in queued
    row = json.loads(ok(server.run("challenge", "bobbot", "alicebot", "--json", token=bob)))
    assert row["kind"] == "challenge" and row["requested_by"] == "bob" and row["seed"] is None
    one_line_error(
        server.run("challenge", "bobbot", "alicebot", token=alice), "PERMISSION_DENIED", "not yours"
    )
    one_line_error(server.run("challenge", "alicebot", "nobody", token=alice), "NOT_FOUND")
    one_line_error(server.run("challenge", "alicebot", "bobbot"), "PERMISSION_DENIED")
    server.service.limiter.budgets["challenge"] = Budget(1, 3600.0)
    ok(server.run("challenge", "alicebot", "bobbot", token=alice))
    limited = one_line_error(
        server.run("challenge", "alicebot", "bobbot", token=alice), "RESOURCE_EXHAUSTED", "retry in "
    )
    waits = re.findall(r"retry in (\d+) s", limited)  # the window's rest: 3600 s, less the time since the hit
    assert len(waits) == 1 and 3000 < int(waits[0]) <= 3600, limited  # the trailer's value is not repeated

    # matches: ladder by default, challenges apart; the same JSON as the local command
    ladder = json.loads(ok(server.run("matches", "--season", "s1", "--json")))
    assert {m["kind"] for m in ladder["matches"]} == {"ladder"} and ladder["total"] >= 2
    done = [m for m in ladder["matches"] if m["status"] == "done"]
    assert len(done) == 2 and all(m["revealed"] and m["seed"] is not None for m in done)
    challenges = json.loads(ok(server.run("matches", "--kind", "challenge", "--json")))
    assert challenges["total"] == 3 and {m["status"] for m in challenges["matches"]} == {"queued"}
    assert "alicebot@1 vs bobbot@1" in ok(server.run("matches", "--kind", "challenge"))
    local_matches = _local_in_process(server, "matches", "--season", "s1", "--json")
    assert json.loads(local_matches) == ladder
    one_line_error(server.run("matches", "--season", "nope"), "NOT_FOUND")

    # replays of a finished match: public to anyone, private to a seat's owner and the admin
    match_id = str(done[0]["id"])
    text = ok(server.run("replay", "show", match_id))
    assert text.strip() == "\n".join(_public_lines(server, int(match_id))) and "result:" in text
    exported = json.loads(ok(server.run("replay", "export", match_id, "--json")))
    assert exported == record_to_json(_public_record(server, int(match_id)))
    assert ok(server.run("replay", "show", match_id, "--private", token=alice))
    assert ok(server.run("replay", "show", f"m{match_id}", "--private", token=ADMIN))
    one_line_error(server.run("replay", "show", match_id, "--private"), "PERMISSION_DENIED")
    one_line_error(server.run("replay", "show", "99999"), "NOT_FOUND")
    one_line_error(server.run("replay", "show", "last"), "MATCH 'last'")

    # watching a finished, revealed match: the server replays its public record, one line per event
    from arena.service.ops_watch import record_events

    watched = ok(server.run("watch", match_id)).strip().splitlines()
    expected = record_events(server.service, int(match_id))
    assert sum(line.startswith("  trick ") for line in watched) == sum(e["kind"] == "trick" for e in expected)
    assert sum(line.startswith("deal ") and ", dealer " in line for line in watched) == sum(
        e["kind"] == "deal" for e in expected
    )
    assert watched[0].startswith(f"match {match_id} over: ") is False and watched[-1].startswith(
        f"match {match_id} over: "
    )

    # the bot's own logs of those matches, remotely
    logs = json.loads(ok(server.run("bots", "logs", "alicebot", "--json", token=alice)))
    assert {x["match_id"] for x in logs["matches"]} == {m["id"] for m in done}

    # closing queues the final round robin on the server; freezing stops it
    assert "final round robin queued on the server" in ok(server.run("season", "close", "s1", token=ADMIN))
    assert "season s1 frozen" in ok(server.run("season", "freeze", "s1", token=ADMIN))
    assert json.loads(ok(server.run("standings", "s1", "--json")))["status"] == "frozen"


def _local_in_process(server: Server, *args: str) -> str:
    """A local command in this process, over the server's store."""
    from arena.cli import cli

    done = CliRunner().invoke(cli, list(args), env={"ARENA_DATABASE_URL": server.url, "ARENA_SERVER": ""})
    assert done.exit_code == 0, done.output
    return done.output


def _public_record(server: Server, match_id: int):
    from arena.proto.codec import decode_record
    from arena.replay.privacy import public_record_bytes

    return decode_record(public_record_bytes(server.service.store.replay(match_id)))


def _public_lines(server: Server, match_id: int) -> list[str]:
    from arena.replay.render import render

    return render(_public_record(server, match_id))


def test_local_matches_and_challenge_use_the_same_operations(server: Server) -> None:
    """Without a server, `arena challenge` queues in the local store as its admin; `matches` lists it."""
    for name, owner in (("alicebot", "alice"), ("bobbot", "bob")):
        ok(server.run("bots", "submit", str(RANDOM), "--name", name, token=server.tokens[owner]))
    args = ("challenge", "alicebot", "bobbot", "--deals", "2", "--time", "move=2s", "--json")
    queued = json.loads(_local_in_process(server, *args))
    assert queued["kind"] == "challenge" and queued["requested_by"] == "admin"
    made = server.service.store.match(queued["id"])
    assert made.time_control["move"] == 2.0 and "max_deals=2" in made.rules
    listed = json.loads(_local_in_process(server, "matches", "--kind", "challenge", "--json"))
    assert [m["id"] for m in listed["matches"]] == [queued["id"]]
    assert json.loads(ok(server.run("matches", "--kind", "challenge", "--json"))) == listed
    from arena.cli import cli

    refused = CliRunner().invoke(cli, ["matches", "--season", "nope"], env={"ARENA_DATABASE_URL": server.url})
    assert refused.exit_code == 2 and "no season named 'nope'" in refused.output
    # `bots logs --json` locally runs the server's own operation: the same document as remotely
    local_logs = json.loads(_local_in_process(server, "bots", "logs", "alicebot", "--json"))
    remote_logs = server.run("bots", "logs", "alicebot", "--json", token=server.tokens["alice"])
    assert local_logs == json.loads(ok(remote_logs)) and [b["version"] for b in local_logs["builds"]] == [1]
    # an archive is streamed as it is
    archive = server.client_home / "bot.tar.gz"
    archive.write_bytes(bundle_archive(RANDOM))
    sent = ok(server.run("bots", "submit", str(archive), "--name", "tarbot", token=server.tokens["bob"]))
    assert "submitted tarbot@1 (python" in sent


def test_remote_submit_shows_the_build_output_live_and_only_to_its_owner(
    server: Server, tmp_path, monkeypatch
) -> None:
    """`build | first line` is printed while the build waits at a gate only the test opens, so
    before the build has ended; another owner's token is refused with one line and sees none of it."""
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    server.service.launcher = "local"  # the build may see the gate file
    gate = tmp_path / "gate"
    bundle = build_bundle(tmp_path / "gated", gated_build(gate))
    proc = server.start("bots", "submit", str(bundle), "--name", "gated", token=server.tokens["alice"])
    try:
        assert proc.stderr is not None
        before = []
        while (line := proc.stderr.readline()) and line != "build | first line\n":
            before.append(line)
        assert line == "build | first line\n", before
        assert proc.poll() is None and not gate.exists()  # the build is held: the line came live
        gate.touch()
        out, rest = proc.communicate(timeout=120)
    finally:
        gate.touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, rest
    assert rest.splitlines()[0] == "build | second line" and "submitted gated@1 (python" in out

    refused = server.run("bots", "submit", str(bundle), "--name", "gated", token=server.tokens["bob"])
    one_line_error(refused, "PERMISSION_DENIED", "belongs to another owner")
    assert "build |" not in refused.stderr + refused.stdout
    bob_show = ok(server.run("bots", "show", "gated", token=server.tokens["bob"]))
    assert "first line" not in bob_show

    loud = build_bundle(tmp_path / "loud", f"seq 1 250 # {tmp_path}")
    done = server.run("bots", "submit", str(loud), "--name", "loud", token=server.tokens["alice"])
    shown = [line for line in done.stderr.splitlines() if line.startswith("build")]
    assert shown == [f"build | {i}" for i in range(1, 201)] + [
        "build: more output not shown here; `arena bots show NAME` has the log"
    ], done.stderr


def _without_submit_live(servicer, server) -> None:
    """The methods of a server from before SubmitBotLive: that call answers UNIMPLEMENTED."""

    async def unimplemented(requests, context):
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
        yield  # pragma: no cover

    old = {"SubmitBotLive": grpc.stream_stream_rpc_method_handler(unimplemented)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("elfern.arena.v1.Arena", old),))
    add_arena_service(servicer, server)


def test_remote_submit_to_a_server_without_submit_live_uses_submit_bot(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_BUNDLE_CACHE", str(tmp_path / "cache"))
    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
    service = Service(store=store, admin=AdminToken.of(ADMIN), limiter=RateLimiter(), launcher="local")
    token = add_owner(store, "alice")
    address, stop, thread = serve_in_thread(service, _without_submit_live)
    try:
        (tmp_path / "client").mkdir()
        old = Server(service, address, "", {"alice": token}, tmp_path / "client")
        bundle = build_bundle(tmp_path / "b", f"echo built # {tmp_path}")
        done = old.run("bots", "submit", str(bundle), "--name", "oldway", token=token)
        assert done.returncode == 0 and "submitted oldway@1 (python" in done.stdout, done.stderr
        assert "build |" not in done.stderr  # no live output from SubmitBot; the log is kept
        assert "built" in ok(old.run("bots", "show", "oldway", token=token))
    finally:
        stop.set()
        thread.join(10)
        store.close()


def test_big_uploads_show_progress_and_the_cap_is_one_line(server: Server, tmp_path) -> None:
    big = tmp_path / "bigbot"
    shutil.copytree(RANDOM, big, ignore=shutil.ignore_patterns("__pycache__"))
    (big / "data.bin").write_bytes(os.urandom(3 * 1024 * 1024))  # incompressible: 3 MiB on the wire
    done = server.run("bots", "submit", str(big), "--name", "big", token=server.tokens["alice"])
    assert "submitted big@1" in ok(done)
    assert "uploading bigbot (tar.gz)" in done.stderr and "(100%)" in done.stderr
    assert "building the bundle" in done.stderr
    server.service.upload_cap = 1024 * 1024
    (big / "more.bin").write_bytes(os.urandom(1024))
    over = server.run("bots", "submit", str(big), "--name", "big", token=server.tokens["alice"])
    over.stderr = "".join(
        x for x in over.stderr.splitlines(True) if not x.startswith(("uploading ", "uploaded; "))
    )
    one_line_error(over, "RESOURCE_EXHAUSTED", "over the 1 MiB cap")
    # a folder with a symlink and junk folders is packed as a local submission would hash it
    from arena.store.bundles import content_hash

    linked = tmp_path / "linked"
    shutil.copytree(RANDOM, linked, ignore=shutil.ignore_patterns("__pycache__"))
    (linked / "again.py").symlink_to("bot.py")
    (linked / "__pycache__").mkdir()
    (linked / "__pycache__" / "junk.pyc").write_bytes(b"junk")
    ok(server.run("bots", "submit", str(linked), "--name", "linked", token=server.tokens["alice"]))
    rows = {r["name"]: r for r in json.loads(ok(server.run("bots", "list", "--json")))}
    assert rows["linked"]["hash"] == content_hash(linked)[:12]
    broken = tmp_path / "broken"
    shutil.copytree(RANDOM, broken, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = (broken / "bot.toml").read_text()
    (broken / "bot.toml").write_text(
        manifest + 'build = ["sh", "-c", "echo compiling; echo no-such-header >&2; exit 1"]\n'
    )
    failed = server.run("bots", "submit", str(broken), "--name", "broken", token=server.tokens["alice"])
    assert (
        failed.returncode == 2 and "submitted broken@1" in failed.stdout and "Traceback" not in failed.stderr
    )
    assert "broken@1: build FAILED; it will not play. The end of its build log (" in failed.stderr
    assert "no-such-header" in failed.stderr  # the build log, as the local command shows it
    archive = tmp_path / "not-a-bundle.rar"
    archive.write_bytes(b"x")
    one_line_error(
        server.run("bots", "submit", str(archive), "--name", "x", token=server.tokens["alice"]), ".rar"
    )
    one_line_error(
        server.run("bots", "submit", str(tmp_path), "--name", "x", token=server.tokens["alice"]), "bot.toml"
    )


def test_every_remote_command_explains_remote_mode_in_help() -> None:
    from arena.cli import cli

    runner = CliRunner()
    for args in (
        ["bots", "submit"],
        ["bots", "list"],
        ["bots", "show"],
        ["bots", "logs"],
        ["bots", "retire"],
        ["standings"],
        ["matches"],
        ["replay", "show"],
        ["replay", "export"],
        ["challenge"],
        ["watch"],
        ["season", "create"],
        ["season", "start"],
        ["season", "freeze"],
        ["season", "close"],
        ["season", "list"],
        ["owners", "list"],
    ):
        text = runner.invoke(cli, [*args, "--help"]).output
        assert "--server" in text and "ARENA_SERVER" in text and "ARENA_API_TOKEN" in text, args
