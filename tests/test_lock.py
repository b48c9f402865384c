"""The lock files, pinned with hashes, must cover pyproject.toml and agree with each other.

requirements.lock: what `make setup` installs (the core, every extra, dev). requirements-server.lock:
the server and worker image (the core, the postgres, celery and web extras, the build backend).
requirements-bot.lock: the Python bot image (requirements-bot.in: grpcio, protobuf).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
SERVER_EXTRAS = ("postgres", "celery", "web", "metrics")
RENEW = "renew them: see CONTRIBUTING.md"


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement line ("psycopg[binary]>=3.1" -> "psycopg")."""
    found = re.match(r"[A-Za-z0-9_.-]+", requirement.strip())
    assert found is not None, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def _locked(name: str) -> dict[str, tuple[str, list[str]]]:
    """Each pinned name of the lock file `name` -> (version, the hashes under it)."""
    out: dict[str, tuple[str, list[str]]] = {}
    current = None
    for line in (REPO / name).read_text().splitlines():
        pin = re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line)
        if pin:
            current = _name(pin.group(1))
            out[current] = (pin.group(2), [])
        elif current and (h := re.search(r"--hash=sha256:([0-9a-f]{64})", line)):
            out[current][1].append(h.group(1))
    return out


def _names(requirements: list[str]) -> set[str]:
    return {_name(r) for r in requirements}


def _bot_inputs() -> set[str]:
    lines = (REPO / "requirements-bot.in").read_text().splitlines()
    return _names([line for line in lines if line.strip() and not line.startswith(("#", "-"))])


def _check(lock: str, wanted: set[str]) -> dict[str, tuple[str, list[str]]]:
    locked = _locked(lock)
    missing = sorted(wanted - set(locked))
    assert not missing, f"not in {lock} ({RENEW}): {missing}"
    unhashed = sorted(name for name, (_, hashes) in locked.items() if not hashes)
    assert not unhashed, f"pinned without a hash in {lock}: {unhashed}"
    return locked


def test_setups_lock_covers_the_core_and_every_extra() -> None:
    extras = PROJECT["project"]["optional-dependencies"]
    assert set(SERVER_EXTRAS) | {"dev"} <= set(extras)
    wanted = _names([*PROJECT["project"]["dependencies"], *(r for reqs in extras.values() for r in reqs)])
    _check("requirements.lock", wanted | _bot_inputs())


def test_the_server_lock_holds_the_runtime_and_its_extras_only() -> None:
    extras = PROJECT["project"]["optional-dependencies"]
    runtime = [*PROJECT["project"]["dependencies"], *(r for x in SERVER_EXTRAS for r in extras[x])]
    locked = _check("requirements-server.lock", _names(runtime) | _names(PROJECT["build-system"]["requires"]))
    dev_only = _names(extras["dev"]) - _names(runtime)
    assert not dev_only & set(locked), f"dev packages in the server image: {sorted(dev_only & set(locked))}"


def test_the_bot_lock_holds_what_the_sdk_imports() -> None:
    assert _bot_inputs() == {"grpcio", "protobuf"}
    assert _bot_inputs() <= _names(PROJECT["project"]["dependencies"])
    locked = _check("requirements-bot.lock", _bot_inputs())
    assert len(locked) < 6, f"more than grpc and protobuf's own dependencies: {sorted(locked)}"


def test_the_three_locks_pin_the_same_versions() -> None:
    full = _locked("requirements.lock")
    for lock in ("requirements-server.lock", "requirements-bot.lock"):
        part = _locked(lock)
        assert set(part) <= set(full), f"{lock} has packages setup does not install: {set(part) - set(full)}"
        differ = {n: (v, full[n][0]) for n, (v, _) in part.items() if v != full[n][0]}
        assert not differ, f"{lock} and requirements.lock disagree ({RENEW}): {differ}"
        rehashed = sorted(n for n, (_, hashes) in part.items() if not set(hashes) <= set(full[n][1]))
        assert not rehashed, f"{lock}: hashes requirements.lock does not have: {rehashed}"


def test_setup_and_the_images_install_the_locks_with_their_hashes() -> None:
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert "--require-hashes -r requirements.lock" in setup and "--no-deps" in setup
    arena = (REPO / "docker" / "arena.Dockerfile").read_text()
    assert "--require-hashes -r /src/requirements-server.lock" in arena
    assert "--no-deps --no-build-isolation /src" in arena
    bot = (REPO / "docker" / "bot-python.Dockerfile").read_text()
    assert "--require-hashes -r /src/requirements-bot.lock" in bot
