"""The leak test's world: where the arena lives, the bots it plays, and how its processes start and stop."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SEASON = "leak"
FAKE_NAME = "tactician"  # what the marker bot calls itself; no bot of that name is registered
BOTS = (  # (registered name, owner, bundle)
    ("impostor", "mallory", HERE / "bots" / "marker"),
    ("random", "rita", REPO / "sample_bots" / "python" / "random"),
    ("greedy", "gus", REPO / "sample_bots" / "python" / "greedy"),
)
PREQUEUED_PAIRINGS = 3  # queued before play starts, so the crawl sees queued matches
MATCHES = 10  # the season run's goal (it schedules the rest while playing)


@dataclass
class World:
    home: Path
    url: str
    env: dict[str, str]
    marker: str  # the unique part of the marker bot's secret
    admin_token: str
    owner_tokens: dict[str, str]  # bot name -> its owner's token
    store: object = None
    logs: dict[str, Path] = field(default_factory=dict)

    def arena(self, *args: str, **kw) -> subprocess.Popen:
        """Start `arena ARGS` as its own process (stdout and stderr to files under the home)."""
        name = args[0] + ("-" + args[1] if len(args) > 1 and not args[1].startswith("-") else "")
        out = self.home / f"{name}.out"
        self.logs[name] = out
        fh = out.open("wb")
        return subprocess.Popen(
            [sys.executable, "-m", "arena.cli", *args],
            env=self.env,
            cwd=self.home,
            stdout=fh,
            stderr=subprocess.STDOUT,
            **kw,
        )

    def output(self, name: str) -> str:
        path = self.logs.get(name)
        return path.read_text(errors="replace")[-4000:] if path and path.exists() else ""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def stop(proc: subprocess.Popen, grace: float = 20.0) -> None:
    """End a process this suite started: SIGINT (the arena's clean stop), then SIGKILL, by its pid."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
