"""Launcher selection, the local launcher, and the docker launcher's command line (the launcher against a
real engine: test_docker.py)."""

from __future__ import annotations

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
