"""The load bench's CPU shares (arena/bench/cpu_share.py): a server's ladder is every process under
it, with the CPU of the bots it has already reaped, apart from the server's own; read from /proc."""

from __future__ import annotations

import os
import signal
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
    assert set(used) == {"server", "ladder", "callers", "kernel", "machine", "other", "server_waiting"}
    assert used["ladder"] > used["server"]
    assert all(value >= 0 for value in used.values())
    assert used["kernel"] <= used["machine"]  # the kernel's threads are a part of the machine's busy time


def test_a_server_gone_counts_as_nothing_not_an_error() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    s = sample(gone.pid)
    assert (s.server, s.ladder, s.server_waiting) == (0.0, 0.0, 0.0)
    assert s.machine > 0 and s.callers > 0


# A "server" that spins on core 0 while a child of its own spins on the same core: its thread is
# ready to run about half the time with no core to run on.
CROWDED = (
    "import os, subprocess, sys, time\nos.sched_setaffinity(0, {0})\n"
    "spin = 'import time\\nend = time.monotonic() + 60\\nwhile time.monotonic() < end: pass\\n'\n"
    "subprocess.Popen([sys.executable, '-c', spin])\n"
    "end = time.monotonic() + 60\nwhile time.monotonic() < end: pass\n"
)


def test_a_server_sharing_its_core_is_seen_waiting_for_it() -> None:
    server = subprocess.Popen([sys.executable, "-c", CROWDED], start_new_session=True)
    try:
        time.sleep(1.0)  # both spinning
        before = sample(server.pid)
        time.sleep(1.0)
        after = sample(server.pid)
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
    used = cores(before, after)
    assert used["server_waiting"] > 0.1  # about 0.5: one core, two spinners
    assert used["server"] > 0
