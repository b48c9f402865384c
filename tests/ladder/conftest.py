"""Fixtures of the ladder suites."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from arena.cli import cli


@pytest.fixture
def arena(tmp_path, monkeypatch):
    """`arena(*args, ok=True)`: the real CLI in-process on a fresh ARENA_HOME (SQLite under tmp_path)."""
    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ARENA_DATABASE_URL", raising=False)

    def run(*args: str, ok: bool = True):
        result = CliRunner().invoke(cli, list(args))
        if ok:
            assert result.exit_code == 0, result.output
        return result

    return run
