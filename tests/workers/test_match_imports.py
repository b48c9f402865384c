"""A match of stdio bots (the Python samples ship as such) never loads gRPC in the referee's process:
no seat socket is served, the seats are claimed without it (arena/referee/claims.py), and the sample
bots' SDK speaks the lines. A match with a gRPC bot does load it. Each case in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MATCH = """
import dataclasses, json, sys, warnings
from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match
bots = [load_bundle(p) for p in sys.argv[1:3]]
if sys.argv[3] == "grpc":
    bots[1] = dataclasses.replace(bots[1], protocol="grpc")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    launcher = LocalLauncher(warn=False)
out = play_match(tuple(bots), rules=Rules(max_deals=1), seed=3, time_control=TimeControl(startup=60.0),
                 launcher=launcher)
print(json.dumps({"verdicts": list(out.verdicts), "grpc": "grpc" in sys.modules}))
"""


@pytest.mark.parametrize("second", ["stdio", "grpc"])
def test_only_a_grpc_seat_loads_grpc_in_the_referee(second: str) -> None:
    samples = REPO / "sample_bots" / "python"
    done = subprocess.run(
        [sys.executable, "-c", MATCH, str(samples / "random"), str(samples / "greedy"), second],
        capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["verdicts"] == ["OK", "OK"]
    assert got["grpc"] == (second == "grpc")
