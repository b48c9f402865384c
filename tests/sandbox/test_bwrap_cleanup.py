"""The bwrap launcher's clean-up: nothing of a bot outlives its kill or its referee's SIGKILL (also
mid-launch), and the next launch sweeps the cgroups a dead referee left (docs/sandbox.md, "Cleanup")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import TIME_SCALE, in_cgroup, make_bundle, wait_exit

from arena.sandbox import cgroups
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import Limits

DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(600)
    os._exit(0)
print("daemon started", flush=True)
time.sleep(600)
"""


def test_kill_removes_every_process_and_cgroup(bwrap, tmp_path):
    proc = bwrap.start(
        load_bundle(make_bundle(tmp_path / "d", DAEMON)),
        ["python3", "bot.py"],
        {},
        Limits(),
        socket_path=None,
    )
    deadline = time.monotonic() + 20 * TIME_SCALE
    while "daemon started" not in proc.output() and time.monotonic() < deadline:
        time.sleep(0.05)
    cg = proc.cgroup
    assert cg is not None and len(cg.pids()) >= 3
    proc.kill()
    proc.kill()  # idempotent
    assert proc.exit_status() is not None
    assert in_cgroup(cg.name) == []
    assert cgroups.leftovers(cg.name) == []


REFEREE = """
import sys, time
from pathlib import Path
from arena.sandbox.bwrap import BwrapLauncher
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import Limits
proc = BwrapLauncher().start(load_bundle(sys.argv[1]), ["python3", "bot.py"], {}, Limits(), socket_path=None)
while "daemon started" not in proc.output():
    time.sleep(0.05)
print(proc.cgroup.name if proc.cgroup else "", flush=True)
time.sleep(600)
"""


def test_bots_die_with_a_sigkilled_referee_and_stale_cgroups_are_swept(bwrap, tmp_path):
    bundle = make_bundle(tmp_path / "d", DAEMON)
    referee = subprocess.Popen(
        [sys.executable, "-c", REFEREE, str(bundle)], stdout=subprocess.PIPE, text=True
    )
    try:
        name = referee.stdout.readline().strip()
        assert name, "the referee did not start its bot"
        assert len(in_cgroup(name)) >= 3
        referee.send_signal(signal.SIGKILL)
        referee.wait(10)
        deadline = time.monotonic() + 10 * TIME_SCALE
        while in_cgroup(name) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert in_cgroup(name) == []  # --die-with-parent took the whole sandbox, daemon included
        assert cgroups.leftovers(name) != []  # the dead referee's group is still there...
        assert any(f"/{name}" in r for r in cgroups.sweep_stale())
        assert cgroups.leftovers(name) == []  # ...until the next run sweeps it
    finally:
        referee.kill()


def _wait_until(check, timeout: float = 20.0) -> bool:
    """Poll `check()` until it is true or `timeout` (scaled) runs out; its last answer."""
    deadline = time.monotonic() + timeout * TIME_SCALE
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(check())


def _next_launch(bwrap, tmp_path: Path) -> None:
    """What the next run does first: launch a bot (and sweep what dead referees left)."""
    proc = bwrap.start(
        load_bundle(make_bundle(tmp_path / "next", "print('next')\n")),
        ["python3", "bot.py"],
        {},
        Limits(),
        socket_path=None,
    )
    try:
        assert wait_exit(proc) == 0, proc.output()
    finally:
        proc.kill()


def _needs_cgroups() -> None:
    if cgroups.detect().version == "none":
        pytest.skip("no cgroup hierarchy here: there are no leaves to leave behind")


STALLED_BWRAP = """#!/bin/sh
echo $$ > "$ARENA_TEST_MARK"
while [ ! -e "$ARENA_TEST_GO" ]; do sleep 0.05; done
exec "$ARENA_TEST_BWRAP" "$@"
"""

MID_LAUNCH_REFEREE = """
import os, sys, time
from arena.sandbox.bwrap import BwrapLauncher
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import Limits
launcher = BwrapLauncher()
env = {"ARENA_TEST_RUN": sys.argv[3], "ARENA_TEST_MARK": sys.argv[4], "ARENA_TEST_GO": sys.argv[5],
       "ARENA_TEST_BWRAP": launcher.bwrap}
launcher.bwrap = sys.argv[2]  # stalls the launch after the cgroup join and rlimits, before bwrap starts
proc = launcher.start(load_bundle(sys.argv[1]), ["python3", "bot.py"], env, Limits(), socket_path=None)
print(proc.cgroup.name, flush=True)
time.sleep(600)
"""


def test_a_referee_killed_mid_launch_leaves_nothing_and_the_next_launch_sweeps_its_leaf(
    bwrap, tmp_path, processes_with_env
):
    _needs_cgroups()
    run = f"ARENA_TEST_RUN={tmp_path.name}-{os.getpid()}"
    stalled = tmp_path / "bwrap"
    stalled.write_text(STALLED_BWRAP)
    stalled.chmod(0o755)
    mark, go = tmp_path / "mark", tmp_path / "go"
    bundle = make_bundle(tmp_path / "d", DAEMON)
    argv = [sys.executable, "-c", MID_LAUNCH_REFEREE, str(bundle), str(stalled), run.split("=")[1]]
    referee = subprocess.Popen([*argv, str(mark), str(go)], stdout=subprocess.PIPE, text=True)
    try:
        name = referee.stdout.readline().strip()
        started = _wait_until(lambda: mark.is_file() and mark.read_text().strip() != "")
        assert name and started, "the launch never reached its cgroup"
        assert int(mark.read_text()) in in_cgroup(name)  # in the bot's leaf, bwrap not started yet
        referee.send_signal(signal.SIGKILL)
        referee.wait(10)
        go.touch()  # a launch chain that outlived its referee would now start bwrap and the bot
        assert _wait_until(lambda: not processes_with_env(run)), "the launch outlived its referee"
        assert cgroups.leftovers(name) != []  # the dead referee's leaf is still there...
        _next_launch(bwrap, tmp_path)
        assert cgroups.leftovers(name) == []  # ...until the next launch sweeps it
    finally:
        referee.kill()
        referee.wait(10)


LEAF_REFEREE = """
import os, subprocess, sys, time
from arena.sandbox import cgroups
from arena.sandbox.bwrap import JOIN_SCRIPT
from arena.sandbox.launcher import Limits
cg = cgroups.create(Limits().memory, Limits().pids, "leftover")
forker = "import os, time; os.fork(); time.sleep(600)"
subprocess.Popen(["/bin/sh", "-c", JOIN_SCRIPT, "arena-join", *cg.procs_files(), "--",
                  sys.executable, "-c", forker], env={**os.environ, "ARENA_TEST_RUN": sys.argv[1]})
while len(cg.pids()) < 2:
    time.sleep(0.01)
cg.freeze()  # as the fair clock pauses the idle bot: on cgroup v1 a frozen task cannot die
print(cg.name, flush=True)
time.sleep(600)
"""


def test_the_next_launch_kills_every_task_in_a_dead_referees_frozen_leaf(bwrap, tmp_path, processes_with_env):
    """What no death signal took (a frozen cgroup v1 bot, a launch that lost the race to its
    parent's death) stays in its leaf, and the next launch kills and removes it, even while the
    dead referee is a zombie that its parent has not reaped yet."""
    _needs_cgroups()
    run = f"ARENA_TEST_RUN={tmp_path.name}-{os.getpid()}"
    referee = subprocess.Popen(
        [sys.executable, "-c", LEAF_REFEREE, run.split("=")[1]],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        name = referee.stdout.readline().strip()
        assert name, "the referee did not make its leaf"
        referee.send_signal(signal.SIGKILL)
        state = Path(f"/proc/{referee.pid}/stat")
        assert _wait_until(lambda: state.read_text().rsplit(")", 1)[1].split()[0] == "Z")  # not reaped
        assert len(in_cgroup(name)) == 2 and sorted(in_cgroup(name)) == sorted(processes_with_env(run))
        _next_launch(bwrap, tmp_path)
        assert in_cgroup(name) == [] and processes_with_env(run) == []
        assert cgroups.leftovers(name) == []
    finally:
        referee.kill()
        referee.wait(10)
