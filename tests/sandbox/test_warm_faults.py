"""The warm start under faults (docs/sandbox.md "Warm start"): a crash, a limit or a dead zygote
ends only its own match, a broken zygote is replaced, zygotes are bounded, stopped when retired and
die with their worker. Real bwrap, real gRPC matches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.referee import TimeControl
from arena.sandbox import cgroups
from arena.sandbox.bundle import load_bundle
from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable
from arena.sandbox.launcher import Limits
from arena.sandbox.warm import WarmChild
from arena.workers.match import sweep_stale_match_dirs
from tests.sandbox.sandbox_support import TIME_SCALE, make_bundle
from tests.sandbox.test_warm import CLOCK, PROBE, RANDOM, Keeper, play

ROOT = Path(__file__).resolve().parents[2]
GREEDY = ROOT / "sample_bots" / "python" / "greedy"
HOSTILE = ROOT / "tests" / "hostile" / "bots"
CRASH = """\
from arena.sdk import Bot, run
class Crash(Bot):
    def play(self, view):
        raise RuntimeError("boom")
run(Crash())
"""


def _make(**kw):
    try:
        launcher = BwrapLauncher(warm=True, **kw)
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    if launcher.warm is None:
        pytest.skip("the warm start needs root and a writable cgroup hierarchy")
    return launcher


@pytest.fixture
def warm():
    launcher = _make()
    yield launcher
    launcher.warm.close()


def _gone(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout * TIME_SCALE
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def test_a_fault_ends_only_its_own_match(warm, tmp_path) -> None:
    random = load_bundle(RANDOM)
    crash = load_bundle(make_bundle(tmp_path / "crash", CRASH, name="crash"))
    limits = Limits(memory=192 * 1024 * 1024, cpu_seconds=int(3 * TIME_SCALE))
    faulty = [
        (crash, "CRASH"),
        (load_bundle(HOSTILE / "memory_bomb"), "MEMORY_LIMIT"),
        (load_bundle(HOSTILE / "fork_bomb"), "PIDS_LIMIT"),
        (load_bundle(HOSTILE / "cpu_spin"), "CPU_LIMIT"),
    ]
    keeper = Keeper(warm)
    for i, (bundle, verdict) in enumerate(faulty):
        # cpu_spin never answers: a long move clock, so that its CPU budget strikes first
        clock = TimeControl(startup=CLOCK.startup, move=1.0, bank=30.0 * TIME_SCALE)
        outcome = play(keeper, bundle, random, seed=10 + i, limits=limits, clock=clock)
        assert outcome.verdicts == (verdict, "OK"), (bundle.name, outcome.verdict_details)
    healthy = play(keeper, load_bundle(GREEDY), random, seed=20, limits=limits)
    assert healthy.verdicts == ("OK", "OK")
    assert all(isinstance(h, WarmChild) for _, h in keeper.handles)  # every one of them was warm
    seat1 = warm.warm.zygote_for(random.path)
    assert seat1 is not None and seat1.served == len(faulty) + 1 and seat1.alive()
    for _, handle in keeper.handles:
        assert cgroups.leftovers(handle.cgroup.name) == []


def test_a_killed_zygote_ends_only_its_match_and_is_replaced(warm) -> None:
    random = load_bundle(RANDOM)
    assert play(warm, random, random, seed=30).verdicts == ("OK", "OK")
    first = warm.warm.zygote_for(random.path)
    assert first is not None
    os.kill(first.proc.child_pid(), signal.SIGKILL)  # between matches (seat 1 is cold: the same bundle)
    keeper = Keeper(warm)
    assert play(keeper, random, random, seed=31).verdicts == ("OK", "OK")
    second = warm.warm.zygote_for(random.path)
    assert second is not None and second is not first and isinstance(keeper.handles[0][1], WarmChild)

    def kill_mid_match(ev: dict) -> None:  # once both have joined: seat 0's zygote, and with it its child
        if ev["event"] == "started":
            os.kill(second.proc.child_pid(), signal.SIGKILL)

    broken = play(warm, random, random, seed=32, on_event=kill_mid_match)
    assert broken.verdicts[0] != "OK" and broken.verdicts[1] == "OK"
    keeper = Keeper(warm)
    assert play(keeper, random, random, seed=33).verdicts == ("OK", "OK")
    third = keeper.handles[0][1]
    assert isinstance(third, WarmChild) and third.zygote not in (first, second)


def test_zygotes_are_bounded_and_stopped_when_retired(tmp_path) -> None:
    launcher = _make(warm_max=1)
    try:
        random = load_bundle(RANDOM)
        probe = load_bundle(make_bundle(tmp_path / "probe", PROBE, name="probe"))
        keeper = Keeper(launcher)
        assert play(keeper, random, random, seed=40).verdicts == ("OK", "OK")
        # one child per zygote at a time: seat 0's is busy while seat 1 launches, which goes cold
        assert [type(h).__name__ for _, h in keeper.handles] == ["WarmChild", "BwrapProcess"]
        (old,) = launcher.warm.zygotes()
        assert play(keeper, probe, random, seed=41).verdicts == ("OK", "OK")
        (new,) = launcher.warm.zygotes()  # the idle one made room: stopped, its leaf and dir removed
        assert new is not old and old.proc.exit_status() is not None and not old.dir.exists()
        assert cgroups.leftovers(old.proc.cgroup.name) == []
        assert launcher.warm.retire(probe.path) == 1 and launcher.warm.zygotes() == []
        assert new.proc.exit_status() is not None and cgroups.leftovers(new.proc.cgroup.name) == []
    finally:
        launcher.warm.close()


WORKER = """\
import sys, time
from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.bwrap import BwrapLauncher
from arena.workers.match import play_match
launcher = BwrapLauncher(warm=True)
bundles = (load_bundle(sys.argv[1]), load_bundle(sys.argv[2]))
out = play_match(bundles, rules=Rules(max_deals=1), seed=1, time_control=TimeControl(startup=60.0),
                 launcher=launcher)
print(out.verdicts[0], *[f"{z.proc.child_pid()}:{z.proc.cgroup.name}:{z.dir}" for z in launcher.warm.zygotes()],
      flush=True)
time.sleep(600)
"""


def test_zygotes_die_with_their_worker_and_are_swept() -> None:
    _make().warm.close()  # skips here when the warm start cannot run
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WORKER), str(RANDOM), str(GREEDY)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
    finally:
        proc.kill()
        proc.wait()
    assert line and line[0] == "OK" and len(line) == 3, line
    zygotes = [(int(pid), name, Path(folder)) for pid, name, folder in (z.split(":") for z in line[1:])]
    for pid, _, _ in zygotes:
        assert _gone(pid), f"zygote {pid} outlived its worker"
    # A new launcher sweeps the leaves of referees that died, and every launch sweeps again: a leaf
    # whose last process is still exiting under load is skipped by one sweep and taken by a later one.
    deadline = time.monotonic() + 10.0 * TIME_SCALE
    while True:
        sweep_stale_match_dirs()
        BwrapLauncher()
        left = [(n, f) for _, n, f in zygotes if f.exists() or cgroups.leftovers(n)]
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, [(n, str(f), f.exists(), cgroups.leftovers(n)) for n, f in left]
