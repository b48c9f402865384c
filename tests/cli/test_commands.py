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


def test_a_finished_command_leaves_its_objects_to_the_kernel_and_keeps_its_code_and_output() -> None:
    """`main` freezes the collector once the command is done (the interpreter's teardown would
    search every imported object for cycles: most of `arena play`'s exit); the exit code, what the
    command printed and the exit handlers are untouched."""
    script = (
        "import atexit, gc, sys\n"
        "from arena.cli import main\n"
        "atexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        "code = main(sys.argv[1:])\n"
        "print('frozen', gc.get_freeze_count() > 0, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    ok = subprocess.run([sys.executable, "-c", script, "new", "--help"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert "Usage: arena new" in ok.stdout
    assert ok.stderr.split("\n")[:2] == ["frozen True", "handler ran"], ok.stderr
    bad = subprocess.run([sys.executable, "-c", script, "play"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Missing argument" in bad.stderr and "frozen True" in bad.stderr
