"""`arena owners` as an organiser types it: the token is printed once, mistakes are one line with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys


def _arena(home, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        env={"ARENA_HOME": str(home), "PATH": "/usr/bin:/bin"},
        cwd=home,
    )


def test_owners_commands(tmp_path) -> None:
    added = _arena(tmp_path, "owners", "add", "alice")
    assert added.returncode == 0, added.stderr
    token = added.stdout.splitlines()[-1]
    assert token.startswith("elf_")
    listed = json.loads(_arena(tmp_path, "owners", "list", "--json").stdout)
    assert (
        listed[0]["name"] == "alice" and listed[0]["token_prefix"] == token[:8] and not listed[0]["revoked"]
    )
    assert token not in _arena(tmp_path, "owners", "list").stdout
    again = _arena(tmp_path, "owners", "add", "alice")
    assert again.returncode == 2 and "Traceback" not in again.stderr and "rotate" in again.stderr
    assert _arena(tmp_path, "owners", "revoke", "alice").returncode == 0
    assert json.loads(_arena(tmp_path, "owners", "list", "--json").stdout)[0]["revoked"]
    rotated = _arena(tmp_path, "owners", "rotate", "alice")
    assert rotated.returncode == 0 and rotated.stdout.splitlines()[-1] != token
    missing = _arena(tmp_path, "owners", "revoke", "bob")
    assert missing.returncode == 2 and "no owner named 'bob'" in missing.stderr
