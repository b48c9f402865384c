"""Every registered subcommand must import and explain itself: a stale COMMANDS entry breaks `arena`."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from arena.cli import COMMANDS, cli


def test_top_level_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0, result.output
    for name in COMMANDS:
        assert name in result.output


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_has_help(name: str) -> None:
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output


def test_unknown_command_is_a_clear_error() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "arena.cli", "no-such-command"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "No such command" in proc.stderr
    assert "Traceback" not in proc.stderr
