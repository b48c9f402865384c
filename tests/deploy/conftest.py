"""Fixtures of the deploy tests (helpers in deploy_support.py)."""

from __future__ import annotations

import pytest
from deploy_support import load_compose


@pytest.fixture
def compose() -> dict:
    """docker-compose.yml with ARENA_HOME set as the docs say and every other variable at its default."""
    return load_compose({"ARENA_HOME": "/srv/arena-home"})
