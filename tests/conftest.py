"""Fixtures shared by every suite. Suite-specific fixtures live in each folder's conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The checkout's root, for sample bots and docs."""
    return REPO
