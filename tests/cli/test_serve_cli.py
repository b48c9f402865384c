"""`arena serve`: a standalone referee that bots reach over TCP and a Unix socket; Ctrl-C ends it. The
management calls need the admin token, and a referee on a public address refuses to start without one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.cli.serve import is_loopback
from arena.proto import arena_pb2, arena_pb2_grpc
from arena.proto.codec import decode_record
from arena.sdk import Bot, run

TOKEN = "serve-cli-admin-token-0123456789"
ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]


def arena_env(repo_root: Path, **extra: str) -> dict[str, str]:
    """The environment of an `arena` subprocess: this checkout, and no admin token unless given."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_ADMIN_TOKEN"}
    return {**env, "PYTHONPATH": str(repo_root), **extra}


def start_serve(repo_root: Path, tmp_path: Path, *args: str, **env: str) -> subprocess.Popen:
    return subprocess.Popen(
        [*ARENA, "serve", *args], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=arena_env(repo_root, **env),
    )  # fmt: skip


def interrupt(proc: subprocess.Popen) -> tuple[str, str]:
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return out, err


class FirstLegal(Bot):
    def play(self, view):
        return view.legal[0]


def test_serve_hosts_a_match_writes_its_replay_and_stops_on_sigint(repo_root, tmp_path):
    proc = start_serve(
        repo_root, tmp_path, "--unix", str(tmp_path / "r.sock"), "--tcp", "127.0.0.1:0", "--create",
        "--seed", "5", "--time", "move=1s,bank=5s,startup=30s", "--replays", str(tmp_path / "replays"),
    )  # fmt: skip
    listening = proc.stdout.readline()
    # loopback and no admin token: it starts, --create's tokens go to the operator, management is off
    assert "management calls refused: no admin token" in listening and "ARENA_ADMIN_TOKEN" in listening
    tokens = [proc.stdout.readline().split()[-1] for _ in range(2)]
    unix, tcp = listening.split(" on ")[1].split(" (")[0].split(", ")
    threads = [
        threading.Thread(target=run, args=(FirstLegal(), addr, tok))
        for addr, tok in zip((unix, tcp), tokens, strict=True)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    over = proc.stdout.readline()
    assert "over: winner" in over and "['OK', 'OK']" in over
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "shutting down" in rest
    assert len(list((tmp_path / "replays").glob("*.replay"))) == 1
    assert not (tmp_path / "r.sock").exists()


def test_serve_exits_0_when_sigterm_keeps_coming_while_it_stops(repo_root, tmp_path):
    """A service manager or an operator may signal again while the server stops: the stop is already
    under way, so the process still ends with 0 (it used to end with -15 when one landed during exit)."""
    proc = start_serve(repo_root, tmp_path, "--unix", str(tmp_path / "r.sock"), "--workers", "0")
    assert "listening" in proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    while proc.poll() is None:  # one SIGTERM every 2 ms until it is gone: some land during the exit
        time.sleep(0.002)
        try:
            proc.send_signal(signal.SIGTERM)
        except ProcessLookupError:
            break
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "shutting down" in out


def test_serve_with_web_answers_http_and_stops_on_sigint(repo_root, tmp_path):
    import socket
    import urllib.request

    with socket.socket() as probe:  # a free port for the web
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = start_serve(
        repo_root, tmp_path, "--unix", str(tmp_path / "r.sock"), "--web", f"127.0.0.1:{port}",
        "--db", f"sqlite:///{tmp_path}/a.db",
    )  # fmt: skip
    try:
        assert proc.stdout.readline().startswith(f"web: http://127.0.0.1:{port}/")
        assert "referee listening" in proc.stdout.readline()
        body = None
        for _ in range(100):  # uvicorn binds a moment after the referee
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/seasons", timeout=5) as resp:
                    body = resp.read().decode()
                break
            except OSError:
                threading.Event().wait(0.1)
        assert body is not None and body.lstrip().startswith(("[", "{"))
    finally:
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "shutting down" in rest


def test_serve_bounds_its_calls_and_web_connections_from_its_options(repo_root, tmp_path):
    """A real `arena serve --max-calls 2 --max-joining 1 --web-connections 2`: a third gRPC call while
    two streams are open is RESOURCE_EXHAUSTED naming --max-calls, so is a second bot's Play stream
    while one has not joined (naming --max-joining), a third web connection is answered 503 with
    Retry-After, and all are served again once the others are gone."""
    import http.client
    import socket

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from arena.proto import arena_pb2 as pb
    from arena.proto import arena_pb2_grpc

    ports = []
    for _ in range(2):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    tcp, web = ports
    proc = start_serve(
        repo_root, tmp_path, "--unix", "", "--tcp", f"127.0.0.1:{tcp}", "--web", f"127.0.0.1:{web}",
        "--db", f"sqlite:///{tmp_path}/a.db", "--max-calls", "2", "--web-connections", "2", "--web-threads", "4",
        "--max-joining", "1",
    )  # fmt: skip
    channel = grpc.insecure_channel(f"127.0.0.1:{tcp}")
    try:
        assert proc.stdout.readline().startswith(f"web: http://127.0.0.1:{web}/")
        assert "referee listening" in proc.stdout.readline()
        watches = [
            health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest()) for _ in range(2)
        ]
        for watch in watches:
            next(watch)
        with pytest.raises(grpc.RpcError) as over:
            arena_pb2_grpc.ArenaStub(channel).ListBots(pb.ListBotsRequest(), timeout=10)
        assert (
            over.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "--max-calls" in over.value.details()
        )
        for watch in watches:
            watch.cancel()
        for _ in range(100):  # the cancelled streams give their places back
            try:
                arena_pb2_grpc.ArenaStub(channel).ListBots(pb.ListBotsRequest(), timeout=10)
                break
            except grpc.RpcError:
                threading.Event().wait(0.1)
        else:
            raise AssertionError("calls were still refused after the streams ended")

        from arena.proto import referee_pb2_grpc

        silent = threading.Event()

        def nothing() -> Iterator[object]:  # a bot's stream that sends nothing until the test ends it
            silent.wait(30)
            yield from ()

        quiet = referee_pb2_grpc.RefereeStub(channel).Play(nothing())
        for _ in range(100):  # the first silent stream holds the one place once the server has it
            try:
                for _ in referee_pb2_grpc.RefereeStub(channel).Play(iter(()), timeout=10):
                    pass
            except grpc.RpcError as exc:
                if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    assert "its limit (--max-joining)" in exc.details()
                    break
            threading.Event().wait(0.1)
        else:
            raise AssertionError("a second Play stream was never refused while the first had not joined")
        silent.set()
        quiet.cancel()

        def connect() -> http.client.HTTPConnection:
            for _ in range(100):  # uvicorn binds a moment after the referee
                try:
                    conn = http.client.HTTPConnection("127.0.0.1", web, timeout=10)
                    conn.connect()
                    return conn
                except OSError:
                    threading.Event().wait(0.1)
            raise AssertionError("the web never listened")

        held = [connect(), connect()]
        third = connect()
        third.request("GET", "/healthz")
        answer = third.getresponse()
        assert answer.status == 503 and answer.getheader("Retry-After") == "5"
        assert "the server has 2 connections open, its limit" in answer.read().decode()
        for conn in held:
            conn.close()
        for _ in range(100):
            again = connect()
            again.request("GET", "/healthz")
            if again.getresponse().status == 200:
                break
            threading.Event().wait(0.1)
        else:
            raise AssertionError("the web still refused once the connections were closed")
    finally:
        channel.close()
        interrupt(proc)


def test_serve_closes_surplus_and_idle_grpc_connections_from_its_options(repo_root, tmp_path):
    """A real `arena serve --max-connections 2 --connection-idle 1`: a third raw TCP connection is
    closed as it is accepted, and the two idle ones once their idle time is over."""
    import socket

    from connections_support import closed, raw_connection

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        tcp = probe.getsockname()[1]
    proc = start_serve(
        repo_root, tmp_path, "--unix", "", "--tcp", f"127.0.0.1:{tcp}", "--db", f"sqlite:///{tmp_path}/a.db",
        "--max-connections", "2", "--connection-idle", "1",
    )  # fmt: skip
    try:
        assert "referee listening" in proc.stdout.readline()
        held = [raw_connection(tcp) for _ in range(2)]
        over = raw_connection(tcp)
        assert closed([over], within=20), "the connection over --max-connections was kept"
        assert closed(held), "idle connections were kept past --connection-idle"
    finally:
        interrupt(proc)


# -- the admin token and where it may listen ---------------------------------------------------------
@pytest.mark.parametrize("tcp", ["0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0", "example.invalid:0"])
def test_serve_on_a_public_address_without_a_token_exits_2_with_one_line(repo_root, tmp_path, tcp):
    out = subprocess.run(
        [*ARENA, "serve", "--unix", "", "--tcp", tcp, "--replays", str(tmp_path / "replays")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=arena_env(repo_root),
    )  # fmt: skip
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: --tcp {tcp} listens beyond this machine")
    assert "--admin-token-file PATH or ARENA_ADMIN_TOKEN" in lines[0]
    assert not (tmp_path / "replays").exists()  # refused before touching anything


def test_serve_on_a_public_address_starts_with_the_admin_token(repo_root, tmp_path):
    proc = start_serve(repo_root, tmp_path, "--unix", "", "--tcp", "0.0.0.0:0", ARENA_ADMIN_TOKEN=TOKEN)
    listening = proc.stdout.readline()
    out, err = interrupt(proc)
    assert "--tcp 0.0.0.0:0 has no TLS: API tokens cross the network in plain text" in err  # a warning
    assert listening.startswith("referee listening on 127.0.0.1:")
    assert "management calls need the admin token from ARENA_ADMIN_TOKEN" in listening
    assert TOKEN not in listening + out


def test_serve_reads_the_admin_token_file_and_refuses_a_bad_one(repo_root, tmp_path):
    (tmp_path / "short").write_text("too-short\n")
    (tmp_path / "good").write_text(TOKEN + "\n")
    for path, message in (
        (tmp_path / "missing", "cannot read the admin token file"),
        (tmp_path / "short", "shorter"),
    ):
        out = subprocess.run(
            [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", "--admin-token-file", str(path)],
            cwd=tmp_path, capture_output=True, text=True, timeout=60, env=arena_env(repo_root),
        )  # fmt: skip
        assert out.returncode == 2 and message in out.stderr and len(out.stderr.splitlines()) == 1
    proc = start_serve(
        repo_root,
        tmp_path,
        "--unix",
        "",
        "--tcp",
        "127.0.0.1:0",
        "--admin-token-file",
        str(tmp_path / "good"),
    )
    listening = proc.stdout.readline()
    interrupt(proc)
    assert f"management calls need the admin token from {tmp_path / 'good'}" in listening


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rules", "flags=4294967296"], "--rules: rules option flags=4294967296 is invalid"),
        (["--rules", "max_deals=4294967296"], "--rules: rules option max_deals=4294967296 is invalid"),
        (["--time", "move=9999999999s"], "--time: move=1e+10s is out of range"),
    ],
)
def test_serve_refuses_rules_and_clocks_the_wire_cannot_carry(repo_root, tmp_path, args, message):
    out = subprocess.run(
        [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", "--create", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=arena_env(repo_root),
    )  # fmt: skip
    assert out.returncode == 2 and out.stderr.startswith(f"Error: {message}"), out.stderr
    assert len(out.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    "tcp, loopback",
    [
        ("127.0.0.1:1", True), ("127.1.2.3:1", True), ("localhost:1", True), ("LocalHost:1", True),
        ("[::1]:1", True), ("[::ffff:127.0.0.1]:1", True), ("0.0.0.0:1", False), ("[::]:1", False),
        (":1", False), ("10.0.0.1:1", False), ("myhost:1", False), ("localhost.evil.com:1", False),
        ("[::ffff:10.0.0.1]:1", False),
    ],
)  # fmt: skip
def test_is_loopback(tcp, loopback):
    assert is_loopback(tcp) is loopback


def test_serve_end_to_end_with_the_admin_token_two_random_bots_and_the_replay_under_replays(
    repo_root, tmp_path
):
    replays = tmp_path / "replays"
    proc = start_serve(
        repo_root, tmp_path, "--unix", "", "--tcp", "127.0.0.1:0", "--replays", str(replays),
        ARENA_ADMIN_TOKEN=TOKEN,
    )  # fmt: skip
    bots: list[subprocess.Popen] = []
    try:
        address = proc.stdout.readline().split(" on ")[1].split(" (")[0]
        auth = (("authorization", f"Bearer {TOKEN}"),)
        with grpc.insecure_channel(address) as channel:
            api = arena_pb2_grpc.ArenaStub(channel)
            refusals = [
                (arena_pb2.CreateMatchRequest(), (), grpc.StatusCode.UNAUTHENTICATED),
                (arena_pb2.CreateMatchRequest(), (("authorization", "Bearer wrong-token-xxxxxxxx"),),
                 grpc.StatusCode.UNAUTHENTICATED),
                (arena_pb2.CreateMatchRequest(match_id="../x"), auth, grpc.StatusCode.INVALID_ARGUMENT),
                (arena_pb2.CreateMatchRequest(match_id=str(tmp_path / "abs")), auth, grpc.StatusCode.INVALID_ARGUMENT),
                (arena_pb2.CreateMatchRequest(rules=["flags=4294967296"]), auth, grpc.StatusCode.INVALID_ARGUMENT),
            ]  # fmt: skip
            for request, metadata, code in refusals:
                with pytest.raises(grpc.RpcError) as info:
                    api.CreateMatch(request, metadata=metadata, timeout=30)
                assert info.value.code() == code, info.value.details()
            created = api.CreateMatch(
                arena_pb2.CreateMatchRequest(match_id="e2e-1", seed=3, rules=["max_deals=2"]),
                metadata=auth,
                timeout=30,
            )
            bot_dir = repo_root / "sample_bots" / "python" / "random"
            for token in created.tokens:  # the bots as the arena starts them: ARENA_ADDRESS and ARENA_TOKEN
                bots.append(subprocess.Popen(
                    [sys.executable, "bot.py"], cwd=bot_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    env=arena_env(repo_root, ARENA_ADDRESS=address, ARENA_TOKEN=token),
                ))  # fmt: skip
            status = api.GetMatch(
                arena_pb2.GetMatchRequest(match_id="e2e-1", wait=True), metadata=auth, timeout=120
            )
        assert status.state == "OVER" and list(status.result.verdicts) == ["OK", "OK"]
        assert [bot.wait(60) for bot in bots] == [0, 0]
        over = proc.stdout.readline()
        assert over.startswith("match e2e-1 over:") and over.rstrip().endswith(
            f"replay {replays.resolve() / 'e2e-1.replay'}"
        )
    finally:
        for bot in bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait()
        interrupt(proc)
    assert decode_record((replays / "e2e-1.replay").read_bytes()).match_id == "e2e-1"
    files = {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")}
    # nothing outside --replays but the store (ARENA_HOME is the working directory), nothing else in it
    assert files == {"arena.db", "replays", "replays/e2e-1.replay"}


# -- the store, the sandbox and the workers -----------------------------------------------------------
@pytest.mark.parametrize(
    "args, message",
    [
        (["--db", "sqlite:///{tmp}/a-file/arena.db"], "a-file (File exists); give a path you can write"),
        (["--db", "nosuchdb://x"], "nosuchdb is not supported (only SQLite and PostgreSQL)"),
        (["--workers", "1", "--sandbox", "nope"], "nope"),
        (["--workers", "-1"], "Invalid value for '--workers'"),
    ],
)
def test_serve_refuses_a_bad_store_or_sandbox_in_one_line(repo_root, tmp_path, args, message):
    (tmp_path / "a-file").write_text("a file, not a directory")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    out = subprocess.run(
        [*ARENA, "serve", "--unix", "", "--tcp", "127.0.0.1:0", *args],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, env=arena_env(repo_root),
    )  # fmt: skip
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert len([ln for ln in out.stderr.splitlines() if ln.startswith("Error")]) == 1
    assert "Traceback" not in out.stderr


def test_serve_answers_the_whole_arena_api_and_keeps_create_match(repo_root, tmp_path):
    """The owners' and organiser's calls are on the referee's listener, over the store of ARENA_HOME;
    CreateMatch still needs the admin token; an admin call with no token is refused."""
    from arena.access.owners import add_owner
    from arena.store import Store

    home = tmp_path / "home"
    store = Store.open(None, home=home)
    token = add_owner(store, "ann")
    store.close()
    proc = start_serve(
        repo_root, tmp_path, "--unix", "", "--tcp", "127.0.0.1:0", ARENA_ADMIN_TOKEN=TOKEN, ARENA_HOME=str(home)
    )  # fmt: skip
    try:
        address = proc.stdout.readline().split(" on ")[1].split(" (")[0]
        with grpc.insecure_channel(address) as channel:
            api = arena_pb2_grpc.ArenaStub(channel)
            owner = (("authorization", f"Bearer {token}"),)
            admin = (("authorization", f"Bearer {TOKEN}"),)
            assert list(api.ListBots(arena_pb2.ListBotsRequest(), metadata=owner, timeout=30).bots) == []
            owners = api.ListOwners(arena_pb2.ListOwnersRequest(), metadata=admin, timeout=30)
            assert [o.name for o in owners.owners] == ["ann"]
            for call, request, metadata in (
                (api.ListOwners, arena_pb2.ListOwnersRequest(), owner),
                (api.CreateMatch, arena_pb2.CreateMatchRequest(), owner),
            ):
                with pytest.raises(grpc.RpcError) as info:
                    call(request, metadata=metadata, timeout=30)
                assert info.value.code() in (
                    grpc.StatusCode.PERMISSION_DENIED,
                    grpc.StatusCode.UNAUTHENTICATED,
                )
            created = api.CreateMatch(arena_pb2.CreateMatchRequest(match_id="k1"), metadata=admin, timeout=30)
            assert created.match_id == "k1" and len(created.tokens) == 2
    finally:
        interrupt(proc)


def test_the_web_of_serve_shares_the_servers_service_and_admin_token(tmp_path):
    """`--web` builds the app over the server's own Service: one store, one admin token and one set of
    rate-limit buckets for gRPC and HTTP."""
    from arena.access.admin import AdminToken
    from arena.access.ratelimit import RateLimiter
    from arena.cli.serve import _web_server
    from arena.service.core import Service
    from arena.store import Store

    store = Store.open(f"sqlite:///{tmp_path / 'arena.db'}", home=tmp_path)
    try:
        service = Service(store, admin=AdminToken.of(TOKEN), limiter=RateLimiter(), launcher="local")
        web = _web_server("127.0.0.1:0", f"sqlite:///{tmp_path / 'arena.db'}", service, None)
        app = web.config.app
        assert app.state.admin_token is service.admin
        assert app.state.service is service
    finally:
        store.close()


def _players(pid: int) -> set[int]:
    """The spawned children of `pid` (not multiprocessing's resource tracker)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return {c for c in found if b"multiprocessing.spawn" in Path(f"/proc/{c}/cmdline").read_bytes()}


def test_serve_restarts_its_players_process_when_it_dies(repo_root, tmp_path):
    """--workers: a players' process that dies (here SIGKILL) is started again, and Ctrl-C still stops
    everything cleanly."""
    proc = start_serve(
        repo_root, tmp_path, "--unix", "", "--tcp", "127.0.0.1:0", "--workers", "1", "--sandbox", "local",
        ARENA_HOME=str(tmp_path / "home"),
    )  # fmt: skip
    try:
        assert "referee listening" in proc.stdout.readline()
        for line in proc.stderr:  # the child says so once its store is open
            if "arena.players: playing challenges" in line:
                break
        (first,) = _players(proc.pid)
        os.kill(first, signal.SIGKILL)
        for line in proc.stderr:
            if "the players' process exited" in line:
                assert "(code -9); starting it again" in line
                break
        for line in proc.stderr:
            if "arena.players: playing challenges" in line:
                break
        (second,) = _players(proc.pid)
        assert second != first
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped; matches in flight went back to the queue" in err and "Traceback" not in err
