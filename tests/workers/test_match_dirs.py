"""play_match's temp dirs name their owner's pid: a referee process killed by SIGKILL leaves its dir
(and socket) behind, and the next play_match sweeps it, while dirs of live processes stay."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match

REPO = Path(__file__).resolve().parents[2]

# A referee waiting for two remote bots that never come; it says when its socket is up.
CHILD = """
from arena.engine import Rules
from arena.referee import TimeControl
from arena.workers.match import play_match

play_match((None, None), rules=Rules(), seed=1, time_control=TimeControl(startup=120), launcher=None,
           on_ready=lambda addresses, tokens: print("ready", flush=True))
"""


def test_a_sigkilled_referees_dir_is_swept_by_the_next_match(monkeypatch):
    root = Path(tempfile.mkdtemp(prefix="amd-"))  # short: the Unix socket path inside must stay < 108 bytes
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        cwd=REPO,
        env={**os.environ, "TMPDIR": str(root)},
        stdout=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        stale = [p for p in root.iterdir() if p.name.startswith(f"arena-match-{child.pid}-")]
        assert len(stale) == 1
        assert all((stale[0] / f"seat{seat}" / "referee.sock").is_socket() for seat in (0, 1))
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        assert stale[0].exists()  # SIGKILL skipped the cleanup
        live = root / f"arena-match-{os.getpid()}-keepme"
        live.mkdir()
        (live / "owner").write_text(f"{os.getpid()} {os.readlink('/proc/self/ns/pid')}\n")
        unrelated = root / "arena-matches-of-someone"
        unrelated.mkdir()
        # the same dead pid, but made in another pid namespace (a /tmp shared with a container), or
        # with no owner file: not ours to judge
        foreign = root / f"arena-match-{child.pid}-foreign"
        foreign.mkdir()
        (foreign / "owner").write_text(f"{child.pid} pid:[1]\n")
        unowned = root / f"arena-match-{child.pid}-unowned"
        unowned.mkdir()

        monkeypatch.setattr(tempfile, "tempdir", str(root))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            launcher = LocalLauncher(warn=False)
        bot = load_bundle(REPO / "sample_bots" / "python" / "random")
        out = play_match((bot, bot), rules=Rules(max_deals=1), seed=2, time_control=TimeControl(startup=20),
                         launcher=launcher)  # fmt: skip
        assert out.verdicts == ("OK", "OK"), out.verdict_details

        assert not stale[0].exists()
        # the others stay; the match removed its own dir as usual
        assert sorted(p.name for p in root.iterdir()) == sorted(
            [live.name, unrelated.name, foreign.name, unowned.name]
        )
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        shutil.rmtree(root, ignore_errors=True)
