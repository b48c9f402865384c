"""requirements.lock: what `make setup` installs, pinned with hashes, must cover pyproject.toml."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement line ("psycopg[binary]>=3.1" -> "psycopg")."""
    found = re.match(r"[A-Za-z0-9_.-]+", requirement.strip())
    assert found is not None, requirement
    return re.sub(r"[-_.]+", "-", found.group(0)).lower()


def _locked() -> dict[str, list[str]]:
    """Each pinned name with the hashes under it."""
    out: dict[str, list[str]] = {}
    current = None
    for line in (REPO / "requirements.lock").read_text().splitlines():
        pin = re.match(r"([A-Za-z0-9_.-]+)==\S+", line)
        if pin:
            current = _name(pin.group(1))
            out[current] = []
        elif current and (h := re.search(r"--hash=sha256:([0-9a-f]{64})", line)):
            out[current].append(h.group(1))
    return out


def test_every_dependency_is_pinned_with_hashes() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    locked = _locked()
    missing = sorted({_name(r) for r in wanted} - set(locked))
    assert not missing, f"not in requirements.lock (renew it: see CONTRIBUTING.md): {missing}"
    unhashed = sorted(name for name, hashes in locked.items() if not hashes)
    assert not unhashed, f"pinned without a hash: {unhashed}"


def test_setup_installs_the_lock_with_its_hashes() -> None:
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert "--require-hashes -r requirements.lock" in setup and "--no-deps" in setup
