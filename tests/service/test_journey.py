"""The journey of issue 12, end to end over real gRPC and real HTTP on loopback.

`arena serve --tcp --web --workers 1 --admin-token-file F` runs as a real subprocess on a fresh
ARENA_HOME (SQLite). The organiser creates owners with `arena owners add` on the server's shell (the
same store). From other processes, with only the server's address and a token: the owner submits a
bundle and it builds in the server's sandbox; the admin creates and starts a season and the
server's own workers play it; the owner reads their logs (another owner may not), challenges a
sample bot, and watches that match live. The web, in the same process over the same store, shows it.

`test_the_journey_over_grpc` drives the client side with the generated stub (`ArenaStub`);
`test_the_journey_with_the_cli` does the same with the remote CLI (`arena bots submit` etc. with
ARENA_SERVER/ARENA_API_TOKEN; the organiser's `arena bots house` gives the server its opponent).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from service_support import bundle_archive

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc

pytestmark = pytest.mark.slow

ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]
ADMIN = "journey-admin-token-0123456789abcdef"
REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"
WAIT = 300.0  # seconds any one step may take on a loaded machine (a bound, not a measurement)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Arena:
    """The running server and what the organiser knows about it."""

    proc: subprocess.Popen
    home: Path
    address: str  # gRPC
    web: str  # http://127.0.0.1:PORT
    env: dict[str, str]  # a client machine's environment (no ARENA_HOME, no store)

    def organiser(self, *args: str) -> subprocess.CompletedProcess:
        """`arena ARGS` on the server's shell: the same ARENA_HOME, hence the same store."""
        return subprocess.run(
            [*ARENA, *args], env={**self.env, "ARENA_HOME": str(self.home)}, cwd=self.home,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    def new_owner(self, name: str) -> str:
        out = self.organiser("owners", "add", name)
        assert out.returncode == 0, out.stderr
        token = out.stdout.splitlines()[1].strip()
        assert token.startswith("elf_")
        return token

    def http(self, path: str, token: str | None = None) -> object:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        request = urllib.request.Request(f"{self.web}{path}", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.status == 200
            return json.load(resp)

    def http_status(self, path: str, token: str | None = None) -> int:
        try:
            self.http(path, token)
        except urllib.error.HTTPError as exc:
            return exc.code
        return 200


@pytest.fixture
def arena(repo_root: Path, tmp_path: Path) -> Iterator[Arena]:
    if shutil.which("bwrap") is None:
        pytest.skip("the server builds and plays in the bwrap sandbox")
    home, tcp, web = tmp_path / "server-home", _free_port(), _free_port()
    home.mkdir()
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN + "\n")
    token_file.chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PYTHONPATH"] = str(repo_root)
    proc = subprocess.Popen(
        [*ARENA, "serve", "--unix", "", "--tcp", f"127.0.0.1:{tcp}", "--web", f"127.0.0.1:{web}",
         "--workers", "1", "--admin-token-file", str(token_file), "--replays", str(home / "replays")],
        env={**env, "ARENA_HOME": str(home)}, cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stdout.readline().startswith(f"web: http://127.0.0.1:{web}/")
        listening = proc.stdout.readline()
        assert listening.startswith(f"referee listening on 127.0.0.1:{tcp}"), listening
        assert f"management calls need the admin token from {token_file}" in listening
        running = Arena(proc, home, f"127.0.0.1:{tcp}", f"http://127.0.0.1:{web}", env)
        _until("the web answers", lambda: _web_up(running), proc)
        yield running
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert "stopped; matches in flight went back to the queue" in err  # the workers stopped cleanly
    from arena.store import Store

    store = Store.open(None, home=home)
    try:
        with store.read() as s:
            from sqlalchemy import func, select

            from arena.store.models import Match

            claimed = s.scalar(select(func.count()).select_from(Match).where(Match.status == "running"))
        assert claimed == 0  # nothing left under the stopped workers' leases
    finally:
        store.close()


def _web_up(arena: Arena) -> bool:
    try:
        arena.http("/api/seasons")
    except OSError:
        return False
    return True


def _until(what: str, check, proc: subprocess.Popen, timeout: float = WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        assert proc.poll() is None, (
            f"the server exited while waiting for {what}: {proc.communicate()[1][-3000:]}"
        )
        time.sleep(0.3)
    pytest.fail(f"timed out waiting for {what}")


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _submit(api: arena_pb2_grpc.ArenaStub, token: str, folder: Path, name: str, owner: str = ""):
    data = bundle_archive(folder, name)
    chunks = [
        pb.SubmitBotChunk(header=pb.SubmitBotHeader(name=name, format="tar.gz", size=len(data), owner=owner))
    ]
    chunks += [pb.SubmitBotChunk(data=data[i : i + 65536]) for i in range(0, len(data), 65536)]
    return api.SubmitBot(iter(chunks), metadata=_auth(token), timeout=WAIT)


def _done_matches(api: arena_pb2_grpc.ArenaStub, **filters: str) -> list[pb.MatchInfo]:
    got = api.ListMatches(pb.ListMatchesRequest(status="done", limit=500, **filters), timeout=30)
    return list(got.matches)


def test_the_journey_over_grpc(arena: Arena) -> None:
    ann = arena.new_owner("ann")  # the organiser, on the server's shell
    bob = arena.new_owner("bob")
    channel = grpc.insecure_channel(arena.address)  # from here on: a client with an address and a token
    api = arena_pb2_grpc.ArenaStub(channel)
    admin = _auth(ADMIN)

    # The owner submits from their machine; it builds in the server's sandbox.
    submitted = _submit(api, ann, SAMPLES / "random", "annbot")
    assert submitted.version.build_ok and submitted.version.number == 1 and submitted.new
    # The organiser adds a sample bot for everyone to play, under an owner of its own.
    house = _submit(api, ADMIN, SAMPLES / "greedy", "greedy", owner="house")
    assert house.version.build_ok
    assert {b.name: b.owner for b in api.ListBots(pb.ListBotsRequest(), timeout=30).bots} == {
        "annbot": "ann",
        "greedy": "house",
    }

    # An owner may not run seasons; the admin does, remotely, and the server's workers play it.
    with pytest.raises(grpc.RpcError) as info:
        api.CreateSeason(pb.CreateSeasonRequest(name="spring"), metadata=_auth(ann), timeout=30)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    api.CreateSeason(pb.CreateSeasonRequest(name="spring", rules=["flags=1"]), metadata=admin, timeout=30)
    started = api.StartSeason(pb.SeasonRequest(name="spring"), metadata=admin, timeout=30)
    assert started.status == "running"
    played = _until(
        "two season matches recorded",
        lambda: (ms := _done_matches(api, season="spring")) and len(ms) >= 2 and ms,
        arena.proc,
    )
    assert all(m.kind == "ladder" and m.revealed and list(m.verdicts) == ["OK", "OK"] for m in played)
    standings = api.GetStandings(pb.GetStandingsRequest(season="spring"), timeout=30)
    assert sorted(r.bot.split("@")[0] for r in standings.rows) == ["annbot", "greedy"]

    # The owner reads their own logs; another owner may not.
    logs = api.GetBotLogs(pb.GetBotLogsRequest(name="annbot"), metadata=_auth(ann), timeout=30)
    assert [b.version for b in logs.builds] == [1] and logs.builds[0].build_ok
    assert {e.match_id for e in logs.matches} & {m.id for m in played}
    with pytest.raises(grpc.RpcError) as info:
        api.GetBotLogs(pb.GetBotLogsRequest(name="annbot"), metadata=_auth(bob), timeout=30)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED

    # The owner challenges the sample bot and watches that match live, from before it starts.
    queued = api.Challenge(
        pb.ChallengeRequest(my_bot="annbot", opponent="greedy", rules=["flags=1"]),
        metadata=_auth(ann),
        timeout=30,
    ).match
    assert queued.kind == "challenge" and queued.requested_by == "ann"
    events = list(api.WatchMatch(pb.WatchMatchRequest(match_id=queued.id), timeout=WAIT))
    kinds = [e.WhichOneof("event") for e in events]
    statuses = [e.status.status for e in events if e.WhichOneof("event") == "status"]
    assert kinds[0] == "status" and statuses[0] in ("queued", "running")  # watched from before the end
    assert statuses[-1] == "done"
    final = [e.status for e in events if e.WhichOneof("event") == "status"][-1]
    assert final.revealed and list(final.verdicts) == ["OK", "OK"]
    assert "trick" in kinds and "deal" in kinds and "deal_end" in kinds
    tricks = [e.trick for e in events if e.WhichOneof("event") == "trick"]
    assert all(len(t.cards) == 2 for t in tricks)
    challenges = _done_matches(api, kind="challenge")
    assert [m.id for m in challenges] == [queued.id] and list(challenges[0].verdicts) == ["OK", "OK"]
    assert queued.id not in {m.id for m in _done_matches(api, season="spring")}  # listed apart

    # The web, in the same process, over the same store and the same tokens.
    seasons = arena.http("/api/seasons")
    assert "spring" in json.dumps(seasons)
    rows = arena.http("/api/standings?season=spring")["rows"]
    assert sorted(r["bot"] for r in rows) == ["annbot", "greedy"]
    assert arena.http("/api/me", ann)["owner"] == "ann"
    assert [b["name"] for b in arena.http("/api/me/bots", ann)["bots"]] == ["annbot"]
    listed = arena.http("/api/challenges?status=done")["matches"]
    assert [str(m["id"]) for m in listed] == [str(queued.id)]
    assert arena.http_status("/api/owners", ann) == 403  # an admin call with an owner token
    assert [o["name"] for o in arena.http("/api/owners", ADMIN)["owners"]] == ["ann", "bob"]
    channel.close()


def test_the_journey_with_the_cli(arena: Arena, tmp_path: Path) -> None:
    ann = arena.new_owner("ann")
    laptop = tmp_path / "laptop"  # the bot author's machine: no store, only the server and a token
    laptop.mkdir()

    def client(token: str, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
        out = subprocess.run(
            [*ARENA, *args], cwd=laptop, capture_output=True, text=True, timeout=WAIT,
            env={**arena.env, "ARENA_SERVER": arena.address, "ARENA_API_TOKEN": token, "HOME": str(laptop)},
        )  # fmt: skip
        if ok:
            assert out.returncode == 0, out.stderr
        return out

    client(ann, "bots", "submit", str(SAMPLES / "random"), "--name", "annbot")
    assert "house bots: greedy" in client(ADMIN, "bots", "house", "greedy").stdout
    assert {b["name"] for b in json.loads(client(ann, "bots", "list", "--json").stdout)} == {
        "annbot",
        "greedy",
    }
    client(ADMIN, "season", "create", "autumn", "--format", "flags=1")
    client(ADMIN, "season", "start", "autumn")

    def recorded() -> bool:
        out = json.loads(client(ann, "matches", "--season", "autumn", "--status", "done", "--json").stdout)
        return out["total"] >= 2

    _until("two season matches recorded", recorded, arena.proc)
    logs = json.loads(client(ann, "bots", "logs", "annbot", "--json").stdout)
    assert logs["bot"] == "annbot" and logs["builds"] and logs["matches"]
    refused = client(arena.new_owner("bob"), "bots", "logs", "annbot", ok=False)
    assert refused.returncode == 2 and "PERMISSION_DENIED" in refused.stderr
    challenged = client(ann, "challenge", "annbot", "greedy", "--json").stdout
    match_id = str(json.loads(challenged)["id"])
    watched = client(ann, "watch", match_id, "--json").stdout.splitlines()
    events = [json.loads(line) for line in watched]
    statuses = [e["status"] for e in events if "status" in e]
    assert "status" in events[0] and statuses[-1]["status"] == "done", events[:2]
    assert any("trick" in e for e in events) and any("deal_end" in e for e in events)
