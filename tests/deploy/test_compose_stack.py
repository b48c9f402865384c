"""docker-compose.yml brought up for real by Debian's docker-compose on the private engine
(tests/conftest.py docker_engine): postgres, redis, the server with the web, and two workers, all from
images built locally (scripts/docker_engine.py). Owners submit their bots to the server over gRPC, the
organiser starts a season, the host's runner plays it through the workers, one worker container is
SIGKILLed in the middle of a match, and the standings are read over the web: every match is recorded
once and the ratings are consistent.

Networking (deploy_support.loopback_stack): the engine makes no network, so the services share one
loopback-only namespace and the test enters it with `nsenter --net` to reach 127.0.0.1 there.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from deploy_support import REPO, loopback_stack

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.timeout(1200)]  # the first run builds images

ARENA = str(Path(sys.executable).parent / "arena")
ADMIN = "compose-admin-token-0123456789abcdef"
MATCHES = 6
DEALS = 100


class Stack:
    """One compose project on the private engine, and commands run inside its network namespace."""

    def __init__(self, engine, tmp_path: Path) -> None:
        self.engine = engine
        self.project = f"elfern{uuid.uuid4().hex[:8]}"
        self.home = tmp_path / "home"
        self.home.mkdir()
        os.chmod(tmp_path, 0o755)
        token = tmp_path / "admin-token"
        token.write_text(ADMIN + "\n")
        token.chmod(0o600)
        self.file = tmp_path / "docker-compose.loopback.yml"
        self.file.write_text(yaml.safe_dump(loopback_stack("elfern-local/base:latest"), sort_keys=False))
        self.env = {
            **engine.env(),
            "ARENA_HOME": str(self.home),
            "ARENA_ADMIN_TOKEN_FILE": str(token),
            "ARENA_IMAGE": "elfern-arena/arena:latest",
            "ARENA_POSTGRES_IMAGE": "elfern-local/postgres:latest",
            "ARENA_REDIS_IMAGE": "elfern-local/redis:latest",
            "ARENA_SERVER_WORKERS": "0",  # the Celery workers play every match (counted below)
        }
        self.netns_pid = 0

    def compose(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        cmd = ["docker-compose", "-f", str(self.file), "-p", self.project, *args]
        return subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)

    def container(self, service: str, index: int = 1) -> str:
        return f"{self.project}_{service}_{index}"

    def inside(self, *argv: str) -> list[str]:
        """argv in the stack's network namespace (the host's files, the stack's 127.0.0.1)."""
        return ["nsenter", "--target", str(self.netns_pid), "--net", "--", *argv]

    def run_inside(self, *argv: str, env: dict[str, str], timeout: float = 300):
        return subprocess.run(
            self.inside(*argv), env=env, capture_output=True, text=True, timeout=timeout, cwd=self.home
        )

    def get(self, path: str):
        code = (
            "import json, sys, urllib.request\n"
            "with urllib.request.urlopen('http://127.0.0.1:8000' + sys.argv[1], timeout=10) as r:\n"
            "    print(r.read().decode())\n"
        )
        out = self.run_inside(sys.executable, "-c", code, path, env=dict(os.environ), timeout=60)
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout)


def _wait(predicate, seconds: float, what: str, poll: float = 0.5):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    pytest.fail(f"timed out after {seconds:.0f} s waiting for {what}")


def test_compose_stack_plays_a_season_through_a_worker_kill(docker_engine, tmp_path):
    stack = Stack(docker_engine, tmp_path)
    up = stack.compose("up", "-d", "--no-build", "--scale", "worker=2", timeout=600)
    try:
        assert up.returncode == 0, up.stderr[-3000:]
        _play_and_check(stack)
    finally:
        logs = stack.compose("logs", "--no-color", timeout=120).stdout
        stack.compose("down", "--volumes", "--timeout", "5", timeout=300)
        print(logs[-30000:])  # shown with a failure


def _play_and_check(stack: Stack) -> None:
    engine = stack.engine
    stack.netns_pid = int(engine.docker("inspect", "-f", "{{.State.Pid}}", stack.container("netns")).stdout)
    # The server answers on its web port (compose waited for postgres and redis to be healthy).
    _wait(lambda: _answers(stack), 120, "the server's web")

    # The organiser creates two owners in the server container; each submits a bot over gRPC, and the
    # server builds it in its own sandbox.
    remote = {**os.environ, "ARENA_SERVER": "127.0.0.1:50051", "ARENA_HOME": str(stack.home)}
    for owner, bot in (("alice", "random"), ("bob", "greedy")):
        added = engine.docker("exec", stack.container("server"), "arena", "owners", "add", owner)
        token = re.search(r"elf_[A-Za-z0-9_\-]+", added.stdout).group(0)
        out = stack.run_inside(
            ARENA, "bots", "submit", str(REPO / "sample_bots" / "python" / bot), "--name", bot,
            env={**remote, "ARENA_API_TOKEN": token},
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-2000:]
    admin = {**remote, "ARENA_API_TOKEN": ADMIN}
    # Exactly DEALS deals a match: long enough (a few seconds) to SIGKILL a worker in the middle of one
    # (first to 3 flags took 0.4 to 1.2 s here, shorter than the test takes to see a worker busy).
    for args in (("create", "dep", "--format", f"deals={DEALS}"), ("start", "dep")):
        out = stack.run_inside(ARENA, "season", *args, env=admin)
        assert out.returncode == 0, out.stderr[-2000:]

    # The host's runner (the organiser's shell) plays the season through the two Celery workers.
    local = {
        **os.environ,
        "ARENA_HOME": str(stack.home),
        "ARENA_DATABASE_URL": "postgresql://arena:arena@127.0.0.1:5432/arena",
        "ARENA_BROKER_URL": "redis://127.0.0.1:6379/0",
        # The runner pings the workers playing its matches; a worker that misses 3 pings in a row has its
        # match given back to the queue (docs/deploy.md, "A worker that dies"). 2 s keeps the test short.
        "ARENA_WORKER_PING": "2",
    }
    runner = subprocess.Popen(
        stack.inside(
            ARENA, "season", "run", "dep", "--matches", str(MATCHES), "--executor", "celery",
            "--concurrency", "2", "--quiet",
        ),
        env=local, cwd=stack.home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        victim = stack.container("worker", 1)
        # SIGKILL the first worker while it plays a match: a task received and not yet finished.
        # (1 s into it, so that the worker has marked the task STARTED with its name: a task it had only
        # received would wait in Redis for its visibility timeout, docs/deploy.md)
        _wait(lambda: _mid_match(engine, victim, runner), 240, f"{victim} to be 1 s into a match", poll=0.2)
        killed_at, killed_wall = time.monotonic(), time.time()
        engine.docker("kill", "--signal", "KILL", victim)
        out, err = runner.communicate(timeout=90)  # ping 2 s x 3 misses: ~8 s to requeue, then play it
        finished = time.monotonic() - killed_at
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 0, err[-3000:]
    assert f"played {MATCHES}" in out or "played" in out, out
    print(f"compose stack: the season finished {finished:.1f} s after the worker's SIGKILL")

    # Over the web (the server container): every match once, both seats OK, standings that add up.
    matches = stack.get("/api/matches?season=dep")["matches"]
    rows = stack.get("/api/standings?season=dep")["rows"]
    assert len(matches) == MATCHES and len({m["id"] for m in matches}) == MATCHES, matches
    assert all(m["verdicts"] == ["OK", "OK"] and m["deals"] > 0 for m in matches), [
        (m["id"], m["verdicts"], m["deals"], m.get("status")) for m in matches
    ]
    assert sorted(r["bot"] for r in rows) == ["greedy", "random"]
    assert sum(r["games"] for r in rows) == 2 * MATCHES
    # The store agrees: every match done and recorded once (record_seq 0..N-1, one replay each), the
    # ratings replayed from the results match the stored ones, and exactly one match was played twice:
    # the killed worker's, claimed again (started_at) once the runner's pings gave it up.
    check = (
        "import json, os\nfrom sqlalchemy import func, select\nfrom arena.store import Store\n"
        "from arena.store.models import Match, Replay\nfrom arena.ladder.standings import verify_ratings\n"
        "s = Store.open(os.environ['ARENA_DATABASE_URL'], home=os.environ['ARENA_HOME'])\n"
        "with s.tx() as t:\n"
        "    ms = list(t.scalars(select(Match)))\n"
        "    replays = t.scalar(select(func.count()).select_from(Replay))\n"
        "print(json.dumps({'recorded': s.season('dep').recorded, 'ratings': verify_ratings(s, 'dep'),\n"
        "    'status': sorted(m.status for m in ms), 'seq': sorted(m.record_seq for m in ms),\n"
        "    'replays': replays, 'again': [m.started_at.isoformat() for m in ms if m.attempts > 1]}, default=str))\n"
    )
    out = stack.run_inside(sys.executable, "-c", check, env=local)
    assert out.returncode == 0, out.stderr[-2000:]
    store = json.loads(out.stdout)
    assert store["recorded"] == MATCHES and store["ratings"] == [], store
    assert store["status"] == ["done"] * MATCHES and store["seq"] == list(range(MATCHES)), store
    assert store["replays"] == MATCHES and len(store["again"]) == 1, store
    again = datetime.fromisoformat(store["again"][0]).replace(tzinfo=UTC).timestamp()
    print(f"compose stack: the killed worker's match was back in play {again - killed_wall:.1f} s later")
    assert again - killed_wall < 30, store  # 3 missed pings 2 s apart, 1 s timeouts: ~9 s
    # The matches were played by the workers: the survivor, and the victim before it died. The two
    # replicas share the netns container's hostname and are both pid 1, yet their Celery node names
    # differ: the runner pings the victim by its name, and the survivor must not answer for it.
    survivor = engine.docker("logs", stack.container("worker", 2)).stderr
    killed = engine.docker("logs", victim).stderr
    names = [re.findall(r"(\S+@\S+) ready\.", text) for text in (killed, survivor)]
    assert len(names[0]) == len(names[1]) == 1 and names[0] != names[1], (victim, names)
    assert survivor.count("succeeded") >= 1


def _answers(stack: Stack) -> bool:
    try:
        return isinstance(stack.get("/api/seasons"), list)
    except AssertionError:
        return False


def _mid_match(engine, container: str, runner: subprocess.Popen) -> bool:
    if not _busy(engine, container, runner):
        return False
    time.sleep(1.0)
    return _busy(engine, container, runner)


def _busy(engine, container: str, runner: subprocess.Popen) -> bool:
    if runner.poll() is not None:
        pytest.fail(f"the runner stopped ({runner.returncode}): {runner.communicate()[1][-3000:]}")
    res = engine.docker("logs", container, check=False)
    text = res.stdout + res.stderr
    return text.count("] received") > text.count("] succeeded")
