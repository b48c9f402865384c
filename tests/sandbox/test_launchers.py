"""Launcher selection, the local launcher, and the docker launcher's command line (the launcher against a
real engine: test_docker.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import make_bundle

from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import LaunchSpec, Limits
from arena.sandbox.launchers import LauncherUnavailable, get_launcher


def test_unknown_launcher_names_the_choices():
    with pytest.raises(LauncherUnavailable, match="not one of bwrap, docker, local"):
        get_launcher("chroot")


def test_local_launcher_warns_and_runs_unisolated(tmp_path, echo_socket):
    with pytest.warns(UserWarning, match="without any isolation"):
        launcher = get_launcher("local")
    code = (
        "import os, socket\ns = socket.socket(socket.AF_UNIX); s.connect(os.environ['ARENA_ADDRESS'][7:])\n"
        "s.sendall(b'hi'); print(s.recv(9).decode(), os.getuid())\n"
    )
    proc = launcher.launch(LaunchSpec(load_bundle(make_bundle(tmp_path / "b", code)), echo_socket))
    deadline = time.monotonic() + 20
    while proc.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    assert proc.exit_status() == 0 and "ack:hi" in proc.output()


def test_docker_command_line_has_every_isolation_flag(tmp_path):
    from arena.sandbox.docker import docker_command

    bundle = load_bundle(make_bundle(tmp_path / "b", "print(1)\n"))
    limits = Limits(memory=256 * 1024 * 1024, pids=48)
    cmd = docker_command(
        "docker",
        bundle,
        ["python3", "bot.py"],
        {"ARENA_TOKEN": "t"},
        limits,
        20007,
        "arena-x",
        "1.2",
        Path("/tmp/m/referee.sock"),
    )
    line = " ".join(cmd)
    for flag in (
        "--network none",
        "--read-only",
        "--cap-drop ALL",
        "--security-opt no-new-privileges",
        "--pids-limit 48",
        f"--memory {limits.memory}",
        f"--memory-swap {limits.memory}",
        "--cpus 1",
        "--user 20007:20007",
        "dst=/bot,readonly",
        "src=/tmp/m,dst=/run/arena,readonly",
        "elfern-arena/bot-python:latest python3 bot.py",
    ):
        assert flag in line, flag
    assert "--rm" not in cmd  # the container must outlive the bot, to read OOMKilled
    # the seat token goes by name only; docker takes the value from the client's environment
    assert "--env ARENA_TOKEN" in line and "ARENA_TOKEN=t" not in line and "t" not in cmd
    from arena.sandbox.docker import client_env

    assert client_env({"ARENA_TOKEN": "t"})["ARENA_TOKEN"] == "t"


def test_local_launcher_builds_once_and_reports_build_failed(tmp_path, echo_socket):
    launcher = get_launcher("local", warn=False)
    good = load_bundle(
        make_bundle(
            tmp_path / "g", "print(open('out.txt').read())\n", 'build = ["sh", "-c", "echo made > out.txt"]\n'
        )
    )
    proc = launcher.launch(LaunchSpec(good, echo_socket))
    deadline = time.monotonic() + 20
    while proc.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()
    assert proc.exit_status() == 0 and "made" in proc.output()
    assert not (tmp_path / "g" / "out.txt").exists()
    bad = load_bundle(
        make_bundle(tmp_path / "b", "print(1)\n", 'build = ["sh", "-c", "echo no-compiler; exit 4"]\n')
    )
    failed = launcher.launch(LaunchSpec(bad, echo_socket))
    assert failed.failure_verdict() == "BUILD_FAILED" and "no-compiler" in failed.output_tail()


def _state(pid: int) -> str:
    """The process state letter of `pid` ("" when it is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def _wait_state(pid: int, states: str, timeout: float = 20.0) -> bool:
    """Whether `pid` reaches one of `states` within `timeout` seconds, polled."""
    deadline = time.monotonic() + timeout
    while _state(pid) not in states and time.monotonic() < deadline:
        time.sleep(0.02)
    return _state(pid) in states


def test_the_guard_runs_nothing_for_a_parent_that_is_not_the_launcher():
    """A child reparented before its death signal was set must not run on (spawn.GUARD)."""
    from arena.sandbox import spawn

    # sh forks the guarded command as its own child: its parent is sh, not this process
    done = subprocess.run(
        ["sh", "-c", '"$@"; echo "status $?"', "sh", *spawn.guarded(["echo", "it-ran"])],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.stdout.strip() == "status 137"
    direct = spawn.popen(args=spawn.guarded(["echo", "it-ran"]), stdout=subprocess.PIPE)
    assert direct.communicate(timeout=30)[0].decode().strip() == "it-ran"


LOCAL_REFEREE = """
import sys, threading, time
from pathlib import Path
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import LaunchSpec
from arena.sandbox.local import LocalLauncher
bundle, go = load_bundle(sys.argv[1]), Path(sys.argv[2])
box = []  # launched from a thread that then ends, as the referee's executor threads do
worker = threading.Thread(target=lambda: box.append(LocalLauncher(warn=False).launch(LaunchSpec(bundle, go))))
worker.start(); worker.join()
while Path(f"/proc/self/task/{worker.native_id}").exists():  # gone from the kernel too
    time.sleep(0.01)
proc = box[0]
go.write_text("go")  # the bot answers only now, after its launching thread is gone
while "answered" not in proc.output() and proc.exit_status() is None:
    time.sleep(0.01)
proc.pause()  # as the fair clock pauses the idle bot: SIGSTOP
print(proc.pid, proc.exit_status(), flush=True)
time.sleep(600)
"""

WAITER = """
import os, sys, time
go = os.environ["ARENA_ADDRESS"].removeprefix("unix://")
while not os.path.exists(go):
    time.sleep(0.01)
print("answered", flush=True)
time.sleep(600)
"""


def test_a_local_bot_outlives_its_launching_thread_and_dies_with_a_sigkilled_referee(tmp_path):
    """The local launcher's bot dies with its referee even when stopped (SIGSTOP), and not before:
    it was launched from a thread that ended first (PR_SET_PDEATHSIG fires on thread exit)."""
    bundle = make_bundle(tmp_path / "b", WAITER)
    go = tmp_path / "sock" / "go"
    go.parent.mkdir()
    referee = subprocess.Popen(
        [sys.executable, "-c", LOCAL_REFEREE, str(bundle), str(go)], stdout=subprocess.PIPE, text=True
    )
    try:
        line = referee.stdout.readline().split()  # (the referee's own bounded waits: pytest's timeout)
        assert len(line) == 2, "the referee did not start its bot"
        pid, status = int(line[0]), line[1]
        assert status == "None"  # alive after its launching thread ended, and it answered
        assert _wait_state(pid, "T"), _state(pid)  # stopped
        referee.send_signal(signal.SIGKILL)
        referee.wait(10)
        gone = _wait_state(pid, "Z")  # gone ("" is in every string) or a zombie
        assert gone, "the stopped bot outlived its SIGKILLed referee"
    finally:
        referee.kill()
        referee.wait(10)
