"""docker-compose.yml in its many-machines shape, brought up for real by Debian's docker-compose 1.29 on
the private engine (tests/conftest.py docker_engine): `--scale server=2` behind the `proxy` service
(HAProxy with deploy/haproxy/arena.cfg), two workers with no ARENA_HOME of the server's (they fetch
bundles from the store), all from images built locally. Owners submit through the proxy, the host's
runner plays a season through the workers, one server replica's container is SIGKILLed mid-season,
and reads through the proxy keep answering (gRPC and web), a write through it is stored once, and
every match is recorded once.

Networking: unlike test_compose_stack.py (one shared loopback namespace, where two replicas would take
the same ports), the stack runs on the private bridge Compose makes for it (`internal`: no route out),
on a /24 of 10.213.0.0/16 that no route of this machine uses; the test reaches the proxy, PostgreSQL
and Redis at their addresses on it (deploy_support.network_stack).
"""

from __future__ import annotations

import ipaddress
import json
import os
import random
import re
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import grpc
import pytest
import yaml
from deploy_support import REPO, network_stack

from arena.proto import arena_pb2 as pb
from arena.proto import arena_pb2_grpc

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.timeout(1200)]

ARENA = str(Path(sys.executable).parent / "arena")
ADMIN = "compose-admin-token-0123456789abcdef"
MATCHES = 4
DEALS = 60
READS = 10  # reads through the proxy with one replica dead


def free_subnet() -> ipaddress.IPv4Network:
    """A /24 of 10.213.0.0/16 that no route of this machine overlaps (Compose would refuse it anyway)."""
    routes = subprocess.run(["ip", "-4", "route"], capture_output=True, text=True, check=True).stdout
    used = [ipaddress.ip_network(w, strict=False) for w in re.findall(r"\d+\.\d+\.\d+\.\d+/\d+", routes)]
    for third in random.sample(range(1, 255), 254):
        net = ipaddress.ip_network(f"10.213.{third}.0/24")
        if not any(net.overlaps(u) for u in used):
            return net
    pytest.fail("no free /24 in 10.213.0.0/16 for the stack's network")


class Replicas:
    """One compose project with two server replicas on the private engine."""

    def __init__(self, engine, tmp_path: Path) -> None:
        self.engine = engine
        self.project = f"elfern{uuid.uuid4().hex[:8]}"
        self.home = tmp_path / "home"
        self.home.mkdir()
        os.chmod(tmp_path, 0o755)
        token = tmp_path / "admin-token"
        token.write_text(ADMIN + "\n")
        token.chmod(0o600)
        self.file = tmp_path / "docker-compose.network.yml"
        self.file.write_text(yaml.safe_dump(network_stack(), sort_keys=False))
        subnet = free_subnet()
        self.proxy_ip = str(subnet.network_address + 2)
        self.env = {
            **engine.env(),
            "ARENA_HOME": str(self.home),
            "ARENA_ADMIN_TOKEN_FILE": str(token),
            "ARENA_IMAGE": "elfern-arena/arena:latest",
            "ARENA_PROXY_IMAGE": "elfern-arena/proxy:latest",
            "ARENA_POSTGRES_IMAGE": "elfern-local/postgres:latest",
            "ARENA_REDIS_IMAGE": "elfern-local/redis:latest",
            "ARENA_SERVER_WORKERS": "0",  # the Celery workers play every match (the runner's)
            "ARENA_SUBNET": str(subnet),
            "ARENA_SUBNET_DYNAMIC": str(list(subnet.subnets(new_prefix=25))[1]),
            "ARENA_PROXY_IP": self.proxy_ip,
            # docker-compose 1.29's names for this project's replicas (the file's defaults are for
            # `-p elfern-arena`)
            "ARENA_REPLICA1": self.container("server", 1),
            "ARENA_REPLICA2": self.container("server", 2),
        }

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        cmd = ["docker-compose", "-f", str(self.file), "-p", self.project, *args]
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def container(self, service: str, index: int = 1) -> str:
        return f"{self.project}_{service}_{index}"

    def ip(self, container: str) -> str:
        fmt = "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}"
        return self.engine.docker("inspect", "-f", fmt, container).stdout.strip()

    def running(self, container: str) -> bool:
        return self.engine.docker("inspect", "-f", "{{.State.Running}}", container).stdout.strip() == "true"

    def get(self, path: str):
        """JSON read over the web through the proxy."""
        with urllib.request.urlopen(f"http://{self.proxy_ip}:8443{path}", timeout=30) as r:
            return json.loads(r.read().decode())

    def healthy(self, address: str) -> bool:
        """The replica at `address` answers its own health check (what the proxy asks)."""
        with urllib.request.urlopen(f"http://{address}:8000/healthz", timeout=10) as r:
            return r.status == 200

    def arena(
        self, *argv: str, env: dict[str, str], timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [ARENA, *argv], env=env, capture_output=True, text=True, timeout=timeout, cwd=self.home
        )


def _wait(predicate, seconds: float, what: str, poll: float = 0.5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except OSError:  # not answering yet (urllib's errors are OSErrors)
            value = None
        if value:
            return value
        time.sleep(poll)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


def test_two_server_replicas_behind_the_proxy_survive_a_replica_kill(docker_engine, tmp_path):
    stack = Replicas(docker_engine, tmp_path)
    up = stack.compose("up", "-d", "--no-build", "--scale", "server=2", "--scale", "worker=2", timeout=600)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        _play_and_check(stack)
    finally:
        logs = stack.compose("logs", "--no-color", timeout=120).stdout
        stack.compose("down", "--volumes", "--timeout", "5", timeout=300)
        print(logs[-30000:])  # shown with a failure


def _play_and_check(stack: Replicas) -> None:
    engine = stack.engine
    replicas = [stack.container("server", i) for i in (1, 2)]
    # Both replicas answer on their own, and the proxy (the stack's only way in) answers.
    for name in replicas:
        address = stack.ip(name)
        _wait(lambda a=address: stack.healthy(a), 180, f"{name}'s web")
    _wait(lambda: isinstance(stack.get("/api/seasons"), list), 60, "the web through the proxy")
    # The workers mount nothing of the servers' home; their working folder is a volume of their own.
    for i in (1, 2):
        inspect = engine.docker("inspect", "-f", "{{json .Mounts}}", stack.container("worker", i))
        mounts = json.loads(inspect.stdout)
        assert not [m for m in mounts if str(stack.home) in (m["Source"], m["Destination"])], mounts
        assert [m["Type"] for m in mounts if m["Destination"] == "/var/lib/arena"] == ["volume"], mounts

    # Owners are made in a replica; each submits a bot over gRPC through the proxy.
    remote = {**os.environ, "ARENA_SERVER": f"{stack.proxy_ip}:8443", "ARENA_HOME": str(stack.home)}
    tokens = {}
    for owner, bot in (("alice", "random"), ("bob", "greedy")):
        added = engine.docker("exec", replicas[0], "arena", "owners", "add", owner)
        tokens[owner] = re.search(r"elf_[A-Za-z0-9_\-]+", added.stdout).group(0)
        out = stack.arena(
            "bots", "submit", str(REPO / "sample_bots" / "python" / bot), "--name", bot,
            env={**remote, "ARENA_API_TOKEN": tokens[owner]},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
    admin = {**remote, "ARENA_API_TOKEN": ADMIN}
    for args in (("create", "dep", "--format", f"deals={DEALS}"), ("start", "dep")):
        out = stack.arena("season", *args, env=admin)
        assert out.returncode == 0, out.stderr[-2000:]

    # The host's runner plays the season through the workers (PostgreSQL and Redis at their addresses).
    local = {
        **os.environ,
        "ARENA_HOME": str(stack.home),
        "ARENA_DATABASE_URL": f"postgresql://arena:arena@{stack.ip(stack.container('postgres'))}:5432/arena",
        "ARENA_BROKER_URL": f"redis://{stack.ip(stack.container('redis'))}:6379/0",
        "ARENA_WORKER_PING": "2",
    }
    runner = subprocess.Popen(
        [ARENA, "season", "run", "dep", "--matches", str(MATCHES), "--executor", "celery",
         "--concurrency", "2", "--quiet"],
        env=local, cwd=stack.home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    channel = grpc.insecure_channel(f"{stack.proxy_ip}:8443")
    stub = arena_pb2_grpc.ArenaStub(channel)
    try:
        # Mid-season (a match exists), SIGKILL replica 1: reads through the proxy keep answering,
        # each retried on replica 2 when replica 1 never answers (arena.cfg's retry-on).
        _wait(lambda: stack.get("/api/matches?season=dep")["matches"], 240, "the season's first match")
        engine.docker("kill", "--signal", "KILL", replicas[0])
        for _ in range(READS):
            assert isinstance(stack.get("/api/matches?season=dep")["matches"], list)
            names = [s.name for s in stub.ListSeasons(pb.ListSeasonsRequest(), timeout=60).seasons]
            assert names == ["dep"], names
        out, err = runner.communicate(timeout=300)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 0, err[-3000:]
    assert not stack.running(replicas[0])  # still dead: replica 2 alone answered from the kill on

    # A write through the proxy with replica 1 dead: stored once (a second version of alice's bot, new
    # content under its name; the same content would return the existing version).
    out = stack.arena(
        "bots", "submit", str(REPO / "sample_bots" / "python" / "tactician"), "--name", "random",
        env={**remote, "ARENA_API_TOKEN": tokens["alice"]},
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]

    # Through the proxy: every match once, both seats OK, standings that add up.
    matches = stack.get("/api/matches?season=dep")["matches"]
    rows = stack.get("/api/standings?season=dep")["rows"]
    assert len(matches) == MATCHES and len({m["id"] for m in matches}) == MATCHES, matches
    assert all(m["verdicts"] == ["OK", "OK"] and m["deals"] > 0 for m in matches), matches
    assert sum(r["games"] for r in rows) == 2 * MATCHES
    # The store agrees: recorded once each (record_seq 0..N-1, one replay each), ratings replayed
    # from the results equal the stored ones, and alice's bot has exactly two versions.
    check = (
        "import json, os\nfrom sqlalchemy import func, select\nfrom arena.store import Store\n"
        "from arena.store.models import Bot, BotVersion, Match, Replay\n"
        "from arena.ladder.standings import verify_ratings\n"
        "s = Store.open(os.environ['ARENA_DATABASE_URL'], home=os.environ['ARENA_HOME'])\n"
        "with s.tx() as t:\n"
        "    ms = list(t.scalars(select(Match)))\n"
        "    replays = t.scalar(select(func.count()).select_from(Replay))\n"
        "    versions = t.scalar(select(func.count()).select_from(BotVersion).join(Bot)"
        ".where(Bot.name == 'random'))\n"
        "print(json.dumps({'recorded': s.season('dep').recorded, 'ratings': verify_ratings(s, 'dep'),\n"
        "    'status': sorted(m.status for m in ms), 'seq': sorted(m.record_seq for m in ms),\n"
        "    'replays': replays, 'versions': versions}, default=str))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", check], env=local, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    store = json.loads(out.stdout)
    assert store["recorded"] == MATCHES and store["ratings"] == [], store
    assert store["status"] == ["done"] * MATCHES and store["seq"] == list(range(MATCHES)), store
    assert store["replays"] == MATCHES and store["versions"] == 2, store
    # The proxy took replica 1 out (its health checks failed) and kept replica 2: the last state
    # change its log names for each (a replica that started after the proxy was DOWN, then UP).
    proxy_log = engine.docker("logs", stack.container("proxy")).stderr
    last = dict(re.findall(r"Server web/(r[12]) is (UP|DOWN)", proxy_log))
    assert last.get("r1") == "DOWN" and last.get("r2", "UP") == "UP", proxy_log[-3000:]
