"""`--metrics` and the alert thresholds on the command line: bad values are named with the fix, a
taken port is refused in one line, and `--help` explains them (real `arena` processes)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-c", "import sys; from arena.cli import main; sys.exit(main())"]


def _arena(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "PROMETHEUS_"))}
    env.update(PYTHONPATH=str(REPO), ARENA_HOME=str(tmp_path), TMPDIR=str(tmp_path))
    return subprocess.run([*ARENA, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["serve", "web", "worker"])
def test_help_explains_the_options(tmp_path, command) -> None:
    shown = _arena(tmp_path, command, "--help")
    assert shown.returncode == 0
    assert "--metrics [HOST:]PORT" in shown.stdout and "127.0.0.1" in shown.stdout
    assert ("--alert-stuck-minutes" in shown.stdout) is (command != "worker")


def test_a_bad_address_is_named(tmp_path) -> None:
    done = _arena(tmp_path, "web", "--port", "0", "--metrics", "localhost:http")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "--metrics 'localhost:http': expected PORT or HOST:PORT" in done.stderr


def test_a_taken_port_is_refused_in_one_line(tmp_path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _arena(tmp_path, "web", "--port", "0", "--metrics", str(port))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert f"--metrics {port}: cannot listen" in done.stderr and "pick another port" in done.stderr
    assert not list(tmp_path.glob("arena-metrics-*"))  # the counting folder went with the refusal


def test_a_negative_threshold_is_refused(tmp_path) -> None:
    done = _arena(tmp_path, "web", "--alert-disk-free", "-1")
    assert done.returncode == 2 and "--alert-disk-free" in done.stderr
