"""Fixtures of the deploy tests (helpers in deploy_support.py; the namespace hosts in scripts/hosts.py,
shared with scripts/bench_hosts.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))  # `from hosts import ...`
from deploy_support import DOCS_ENV, load_compose


@pytest.fixture
def compose() -> dict:
    """docker-compose.yml with ARENA_HOME and ARENA_ADMIN_TOKEN_FILE set as the docs say and every other
    variable at its default."""
    return load_compose(DOCS_ENV)
