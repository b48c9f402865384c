"""The load bench's CPU shares (arena/bench/cpu_share.py): a server's ladder is every process under
it, with the CPU of the bots it has already reaped, apart from the server's own; read from /proc."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from arena.bench.cpu_share import cores, sample

# "server": starts a "players" process that runs a "bot" burning CPU, reaps it, then waits (as a
# pool worker outlives the bots it played); the server itself only sleeps.
BOT = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass\n"
PLAYERS = f"import subprocess, sys, time\nsubprocess.run([sys.executable, '-c', {BOT!r}])\nprint('reaped', flush=True)\ntime.sleep(120)\n"
SERVER = (
    f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {PLAYERS!r}])\ntime.sleep(120)\n"
)


def test_the_ladder_counts_its_reaped_bots_and_the_server_only_itself(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with open(out, "w") as f:
        server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=f)
    try:
        before = sample(server.pid)
        deadline = time.monotonic() + 60
        while "reaped" not in out.read_text():  # the bot has burnt its CPU and is gone
            assert server.poll() is None and time.monotonic() < deadline, "the bot never ended"
            time.sleep(0.05)
        after = sample(server.pid)
    finally:
        server.kill()
        server.wait()
    assert after.ladder - before.ladder >= 0.3  # the reaped bot's 0.4 s, through its reaper
    assert after.server - before.server < 0.2  # the server slept
    used = cores(before, after)
    assert set(used) == {"server", "ladder", "callers", "kernel", "machine", "other"}
    assert used["ladder"] > used["server"]
    assert all(value >= 0 for value in used.values())


def test_a_server_gone_counts_as_nothing_not_an_error() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    s = sample(gone.pid)
    assert (s.server, s.ladder) == (0.0, 0.0)
    assert s.machine > 0 and s.callers > 0
