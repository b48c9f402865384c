"""The compose topology's processes, for real and without Docker: the server service's `arena serve
--web`, two replicas of the worker service's `arena worker`, and the host's `arena season run
--executor celery`, on the real PostgreSQL and Redis, with the variables the compose file sets.

Each worker runs under the worker container's privileges as far as they can be reproduced here: a
capability bounding set of Docker's defaults plus the compose file's `cap_add`, the server's ARENA_HOME
hidden (an empty tmpfs over it: the workers mount none of it and fetch bundles from the store) and
their own scratch folder as working folder, and no cgroups (the container's cgroupfs is read-only). Not reproduced: Docker's seccomp and
AppArmor profiles, and the container's own namespaces (that needs the Docker engine, absent here).
(tests/workers/test_celery.py covers the Celery path itself on SQLite with unsandboxed bots.)
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
import urllib.request
import uuid
from pathlib import Path

import pytest
from deploy_support import ADMIN_SECRET, DOCKER_DEFAULT_CAPS, DOCS_ENV, REPO, load_compose

from arena.ladder.standings import verify_ratings
from arena.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

ARENA = str(Path(sys.executable).parent / "arena")
REDIS = "redis://127.0.0.1:6379/13"  # a db number of its own
COMPOSE = load_compose(DOCS_ENV)
ADMIN = "topology-admin-token-0123456789abcdef"


def _needs_root_bwrap() -> None:
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("bwrap", "setpriv", "unshare", "mount")):
        pytest.skip("reproducing the worker container needs root, bwrap, setpriv, unshare and mount")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def container_caps(drop: str | None = None) -> str:
    """setpriv's --bounding-set for the worker container: Docker's defaults + the compose cap_add."""
    caps = [c for c in (*DOCKER_DEFAULT_CAPS, *COMPOSE["services"]["worker"]["cap_add"]) if c != drop]
    return "-all," + ",".join(f"+{c.lower()}" for c in caps)


def as_worker_container(
    argv: list[str], home: Path, drop: str | None = None, hide: bool = False
) -> list[str]:
    """`argv` with the worker container's capabilities and ARENA_HOME read-only, or with `hide` not
    there at all (an empty tmpfs over it), in a mount namespace of its own."""
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    if hide:
        script = 'mount -t tmpfs -o size=1m,mode=0755 none "$1" && shift && exec "$@"'
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "sh",
        str(home),
        "setpriv",
        "--bounding-set",
        container_caps(drop),
        "--inh-caps",
        "-all",
        "--",
        *argv,
    ]


def _stop(proc: subprocess.Popen) -> str:
    os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    return err


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_compose_topology_plays_a_season(database_url: str, tmp_path: Path, redis_client) -> None:
    _needs_root_bwrap()
    client = redis_client(REDIS)
    home, queue = tmp_path / "home", f"arena-deploy-{uuid.uuid4().hex[:10]}"
    home.mkdir()
    token_file = tmp_path / "admin-token"  # the secret's file, as Compose would mount it
    token_file.write_text(ADMIN + "\n")
    token_file.chmod(0o600)
    # ARENA_SERVER_WORKERS=0: here the Celery workers must play every match (counted below); the
    # server's own players are covered by tests/service/test_journey.py.
    compose_env = {
        "ARENA_HOME": str(home),
        "ARENA_ADMIN_TOKEN_FILE": str(token_file),
        "ARENA_SERVER_WORKERS": "0",
    }
    services = load_compose(compose_env)["services"]
    # The compose services' variables, pointed at this machine's PostgreSQL schema and Redis db.
    local = {"ARENA_HOME": str(home), "ARENA_DATABASE_URL": database_url, "ARENA_BROKER_URL": REDIS}
    server_only = {"ARENA_HOME", "ARENA_STATE_URL", "FORWARDED_ALLOW_IPS"}
    assert set(services["worker"]["environment"]) == set(local) - server_only
    assert set(services["server"]["environment"]) - server_only == set(local) - server_only
    env = {**os.environ, **local, "ARENA_CELERY_QUEUE": queue}
    # The workers: no ARENA_HOME (its default, the working folder: a scratch folder of each's own).
    worker_env = {k: v for k, v in env.items() if k != "ARENA_HOME"}
    worker_env["ARENA_CGROUP_ROOT"] = str(tmp_path / "no-cgroups")
    scratch = [tmp_path / f"worker{i}" for i in (1, 2)]
    for folder in scratch:
        folder.mkdir()

    def arena(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [ARENA, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300
        )

    for name in ("random", "greedy"):  # what the organiser types on the host
        out = arena(
            "bots", "submit", str(REPO / "sample_bots" / "python" / name), "--name", name, "--owner", name
        )
        assert out.returncode == 0, out.stderr
    assert arena("season", "create", "dep", "--format", "flags=1", "--seed", "5").returncode == 0
    assert arena("season", "start", "dep").returncode == 0

    web_port, tcp_port, metrics_port = _free_port(), _free_port(), _free_port()
    serve = [
        a.replace("0.0.0.0:50051", f"127.0.0.1:{tcp_port}")
        .replace("0.0.0.0:8000", f"127.0.0.1:{web_port}")
        .replace("0.0.0.0:9464", f"127.0.0.1:{metrics_port}")  # each process here has its own port
        .replace(ADMIN_SECRET, str(token_file))  # the secret's mount point -> its file
        for a in services["server"]["command"]
    ]
    assert serve != services["server"]["command"]
    popen = {
        "cwd": tmp_path,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "text": True,
        "start_new_session": True,
    }
    server = subprocess.Popen([ARENA, *serve[1:]], env=env, **popen)
    # on the stack's network every replica has 9464 of its own address; on this host, a loopback port each
    worker_commands = [
        [a.replace("0.0.0.0:9464", f"127.0.0.1:{_free_port()}") for a in services["worker"]["command"][1:]]
        for _ in scratch
    ]
    workers = [
        subprocess.Popen(
            as_worker_container([ARENA, *command], home, hide=True),
            env=worker_env,
            **{**popen, "cwd": folder},
        )
        for folder, command in zip(scratch, worker_commands, strict=True)
    ]  # --scale worker=2
    try:
        base = f"http://127.0.0.1:{web_port}"
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"{base}/api/seasons", timeout=2) as resp:
                    assert resp.status == 200
                    break
            except OSError:
                assert server.poll() is None, server.communicate()[1]
                time.sleep(0.2)
        # The management API answers the organiser with the secret's token, and nobody without it.
        import grpc

        from arena.proto import arena_pb2, arena_pb2_grpc

        with grpc.insecure_channel(f"127.0.0.1:{tcp_port}") as channel:
            api = arena_pb2_grpc.ArenaStub(channel)
            auth = (("authorization", f"Bearer {ADMIN}"),)
            assert list(api.ListOwners(arena_pb2.ListOwnersRequest(), metadata=auth, timeout=30).owners) == []
            with pytest.raises(grpc.RpcError) as info:
                api.ListOwners(arena_pb2.ListOwnersRequest(), timeout=30)
            assert info.value.code() in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)
        run = arena(
            "season", "run", "dep", "--matches", "4", "--executor", "celery", "--concurrency", "2", "--quiet"
        )
        assert run.returncode == 0, run.stderr
        assert "played 4 matches" in run.stdout
        with urllib.request.urlopen(f"{base}/api/standings?season=dep", timeout=10) as resp:
            rows = json.load(resp)["rows"]
        with urllib.request.urlopen(f"{base}/api/matches?season=dep", timeout=10) as resp:
            matches = json.load(resp)["matches"]
    finally:
        logs = [_stop(w) for w in workers]
        _stop(server)
        for pattern in (f"*{queue}*", "_kombu.binding_deadlines"):  # db 13 is this test's own
            for key in client.scan_iter(pattern):
                client.delete(key)
    # The web (server service) shows what the host's runner recorded from the workers' matches.
    assert sorted(r["bot"] for r in rows) == ["greedy", "random"] and sum(r["games"] for r in rows) == 8
    # Real games in the sandbox, not start-up failures: both seats behaved, cards were dealt.
    assert len(matches) == 4 and all(m["verdicts"] == ["OK", "OK"] and m["deals"] > 0 for m in matches), (
        matches
    )
    played = sum(log.count("succeeded") for log in logs)
    assert played == 4, logs  # every match was played by a worker replica, none by the runner
    # ...with bundles fetched from the store into their own scratch folders (the server's home hidden).
    fetched = [sorted(p.name for p in (f / "bundles").glob("*")) for f in scratch]
    assert any(fetched), fetched
    store = Store.open(database_url, home=home)
    try:
        assert store.season("dep").recorded == 4
        assert verify_ratings(store, "dep") == []
    finally:
        store.close()


@pytest.mark.parametrize("cap", COMPOSE["services"]["worker"]["cap_add"])
def test_each_added_capability_is_needed(cap: str, tmp_path: Path) -> None:
    """Without either capability of the compose file's cap_add, no bot even starts in the bwrap sandbox."""
    _needs_root_bwrap()
    bots = [str(REPO / "sample_bots" / "python" / n) for n in ("random", "greedy")]
    argv = [
        ARENA,
        "play",
        *bots,
        "--seed",
        "1",
        "--flags",
        "1",
        "--json",
        "--out",
        str(tmp_path / "r.replay"),
    ]
    env = {**os.environ, "ARENA_CGROUP_ROOT": str(tmp_path / "no-cgroups")}
    (tmp_path / "home").mkdir()
    out = subprocess.run(
        as_worker_container(argv, tmp_path / "home", drop=cap),
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(out.stdout)["verdicts"] == ["STARTUP_FAILED", "STARTUP_FAILED"], out.stderr[-2000:]
