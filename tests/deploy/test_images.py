"""The arena and Python bot images hold exactly their lock files' packages (docker/*.Dockerfile install
them with --require-hashes), built offline from a wheelhouse of exactly the locked wheels."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from deploy_support import REPO

pytestmark = [pytest.mark.slow, pytest.mark.docker, pytest.mark.timeout(1800)]


def _pins(lock: str) -> set[tuple[str, str]]:
    """(normalised name, version) of every pin in a lock file."""
    found = re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (REPO / lock).read_text(), flags=re.M)
    return {(_norm(name), version) for name, version in found}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed(engine, tag: str) -> set[tuple[str, str]]:
    out = engine.docker(
        "run", "--rm", "--network", "none", tag, "/opt/arena/bin/pip", "list", "--format", "json"
    ).stdout
    return {(_norm(p["name"]), p["version"]) for p in json.loads(out)}


def test_the_wheelhouse_holds_exactly_the_locked_wheels(docker_engine) -> None:
    spec = importlib.util.spec_from_file_location("docker_engine", REPO / "scripts" / "docker_engine.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    house = module.wheelhouse()  # cached by the locks' content: the one the images were built from
    wheels = set()
    for wheel in house.glob("*.whl"):
        name, version = wheel.name.split("-")[:2]
        wheels.add((_norm(name), version))
    assert wheels == _pins("requirements-server.lock") | _pins("requirements-bot.lock")
    assert [p.name for p in house.iterdir() if p.suffix != ".whl"] == [".complete"]


def test_the_images_install_their_locks_and_nothing_else(docker_engine) -> None:
    arena = _installed(docker_engine, "elfern-arena/arena:latest")
    locked = _pins("requirements-server.lock")
    assert {n for n, _ in arena - locked} == {"elfern-arena", "pip"}, arena - locked
    assert locked <= arena
    checked = docker_engine.docker(
        "run", "--rm", "--network", "none", "elfern-arena/arena:latest", "/opt/arena/bin/pip", "check"
    )
    assert "No broken requirements" in checked.stdout
    bot = _installed(docker_engine, "elfern-arena/bot-python:latest")
    # pip and setuptools: the venv's own (python3-venv); the lock adds grpcio, protobuf and their needs
    assert {n for n, _ in bot - _pins("requirements-bot.lock")} == {"pip", "setuptools"}
    assert _pins("requirements-bot.lock") <= bot


def test_the_arena_image_holds_the_built_launch_helper(docker_engine) -> None:
    """A worker in the image launches bots through the static helper (docs/sandbox.md), not the
    fallback chain: it was built with the image, is not older than its source, and runs a command."""
    probe = (
        "from arena.sandbox import launch_helper as h; import subprocess, sys; "
        "assert h.fresh(), 'not built'; "
        "sys.exit(subprocess.run([str(h.TARGET), '--', 'true']).returncode)"
    )
    result = docker_engine.docker(
        "run",
        "--rm",
        "--network",
        "none",
        "elfern-arena/arena:latest",
        "/opt/arena/bin/python",
        "-c",
        probe,
        check=False,
    )
    assert result.returncode == 0, result.stderr
