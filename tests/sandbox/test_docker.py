"""The Docker launcher against a real, private engine (the `docker_engine` session fixture): what a bot
sees from inside its container, and real matches between sample bots."""

from __future__ import annotations

import json
import os
import time

import pytest
from sandbox_support import make_bundle

from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import LaunchSpec, Limits

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.timeout(1200)]  # the first run builds images

MiB = 1024 * 1024

#: Run inside the container: everything the launcher promises, as the bot itself observes it.
PROBE = r"""
import json, os, socket
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return line.split()[1]
def first(*paths):
    for p in paths:
        try:
            return open(p).read().strip()
        except OSError:
            pass
def writable(path):
    try:
        open(path, "w").close()
        return True
    except OSError as exc:
        return exc.strerror
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["ARENA_ADDRESS"][len("unix://"):])
s.sendall(b"hi")
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(), "cap_eff": status("CapEff"), "cap_bnd": status("CapBnd"),
    "no_new_privs": status("NoNewPrivs"),
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "run_arena": sorted(os.listdir("/run/arena")),
    "root_writable": writable("/probe"), "bot_writable": writable("/bot/probe"),
    "tmp_writable": writable("/tmp/probe"),
    "memory_max": first("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"),
    "pids_max": first("/sys/fs/cgroup/pids/pids.max", "/sys/fs/cgroup/pids.max"),
    "cpu_quota": first("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu.max"),
    "reply": s.recv(16).decode(),
}))
"""


@pytest.fixture
def docker(docker_engine, tmp_path):
    from arena.sandbox.docker import DockerLauncher

    return DockerLauncher(
        docker=docker_engine_client(), host=docker_engine.host, state_dir=tmp_path / "docker-state"
    )


def docker_engine_client() -> str:
    return "/usr/bin/docker" if os.path.exists("/usr/bin/docker") else "docker"


def _wait(proc, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while proc.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_bot_sees_only_what_the_launcher_grants(docker, docker_engine, tmp_path, echo_socket):
    limits = Limits(memory=200 * MiB, pids=40)
    spec = LaunchSpec(load_bundle(make_bundle(tmp_path / "b", PROBE)), echo_socket, limits=limits)
    proc = docker.launch(spec)
    _wait(proc)
    name = proc.name
    proc.kill()
    assert proc.exit_status() == 0, proc.output()
    seen = json.loads(proc.output().strip().splitlines()[-1])
    assert seen["reply"] == "ack:hi"  # the referee's socket folder is reachable...
    assert seen["run_arena"] == ["referee.sock"]  # ...and it is all of the host the bot gets
    assert seen["uid"] == seen["gid"] and seen["uid"] >= 1000  # its own uid, from the launcher's pool
    assert seen["cap_eff"] == seen["cap_bnd"] == "0000000000000000"  # --cap-drop ALL
    assert seen["no_new_privs"] == "1"
    assert seen["interfaces"] == ["lo"]  # --network none
    assert (
        seen["root_writable"] == "Read-only file system" and seen["bot_writable"] == "Read-only file system"
    )
    assert seen["tmp_writable"] is True  # the tmpfs, capped at limits.tmp_size
    assert seen["memory_max"] == str(limits.memory)
    assert seen["pids_max"] == str(limits.pids)
    assert seen["cpu_quota"] in ("100000", "100000 100000")  # --cpus 1
    # the container is gone after kill(), and so is the uid's lease
    assert docker_engine.docker("ps", "-aq", "--filter", f"name={name}").stdout.strip() == ""


def test_sample_bots_play_the_same_match_as_in_bwrap(docker, repo_root):
    """A real match between sample bots in containers (fair-clock pauses through the container's
    freezer), and the launcher changes where bots run, not the game: the same seed in bwrap gives the
    same moves and result (timing fields aside)."""
    from arena.engine import Rules
    from arena.proto.codec import strip_timing
    from arena.referee import TimeControl
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable
    from arena.workers.match import play_match

    bots = tuple(load_bundle(repo_root / "sample_bots" / "python" / n) for n in ("greedy", "random"))
    try:
        launchers = [docker, BwrapLauncher()]
    except SandboxUnavailable:
        launchers = [docker]  # bwrap is tested on its own elsewhere; the docker match still counts
    results = []
    for launcher in launchers:
        outcome = play_match(
            bots,
            rules=Rules(max_deals=2),
            seed=5,
            time_control=TimeControl(startup=30.0, move=2.0, bank=20.0),
            launcher=launcher,
            pause_idle=True,
            salt=b"0123456789abcdef",
            match_id="docker-vs-bwrap",
        )
        assert outcome.verdicts == ("OK", "OK"), outcome.verdict_details
        assert outcome.end_reason == "COMPLETED" and outcome.deals_played == 2
        record = strip_timing(outcome.record)
        results.append((outcome.winner, [d.SerializeToString() for d in record.deals], outcome.lines))
    assert len(results) == 1 or results[0] == results[1]
