"""What the remote CLI tests share: a real Arena gRPC service on loopback (`Server`) and the checks on a
CLI process's exit (conftest.py's `server` fixture builds one per test).

Each CLI process gets ARENA_SERVER / ARENA_API_TOKEN and an empty ARENA_HOME of its own, so nothing
it prints can come from a local store (the fixture also checks that it never creates one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from arena.service.core import Service

REPO = Path(__file__).resolve().parents[2]
RANDOM = REPO / "sample_bots" / "python" / "random"
WRONG = "elf_xxxxxxxxWRONGWRONGWRONGWRONG"


@dataclass
class Server:
    service: Service
    address: str
    url: str  # the server's store, for the local commands these tests compare with
    tokens: dict[str, str]
    client_home: Path

    def client_env(self, token: str | None = None, server: str | None = None, **env: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        base.update(
            PYTHONPATH=str(REPO),
            ARENA_HOME=str(self.client_home),
            ARENA_SERVER=self.address if server is None else server,
            COLUMNS="200",
        )
        if token:
            base["ARENA_API_TOKEN"] = token
        base.update(env)
        return base

    def run(self, *args: str, token: str | None = None, server: str | None = None, **env: str):
        """`arena ARGS` as a separate process pointed at this server (or at `server`)."""
        return subprocess.run(
            [sys.executable, "-m", "arena.cli", *args],
            capture_output=True,
            text=True,
            env=self.client_env(token, server, **env),
            cwd=self.client_home,
            timeout=600,
        )

    def start(self, *args: str, token: str | None = None) -> subprocess.Popen:
        """`arena ARGS` started, its output read by the test while it runs."""
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self.client_env(token),
            cwd=self.client_home,
        )

    def local(self, *args: str):
        """`arena ARGS` on the server's own store, without --server (what the organiser's shell sees)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        env.update(PYTHONPATH=str(REPO), ARENA_DATABASE_URL=self.url, COLUMNS="200")
        return subprocess.run(
            [sys.executable, "-m", "arena.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.client_home,
            timeout=600,
        )


def one_line_error(done: subprocess.CompletedProcess, *needles: str) -> str:
    """The command failed with exit code 2 and one line (no traceback) holding every needle."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def ok(done: subprocess.CompletedProcess) -> str:
    """The command succeeded; its standard output."""
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout
