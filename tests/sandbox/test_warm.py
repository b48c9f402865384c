"""The warm start (docs/sandbox.md "Warm start"): real bwrap zygotes, real gRPC matches through play_match.

Each match's bots are fresh children of a zygote per bundle: their own cgroup leaf (joined
before any bot code runs), their own uid, their own verdicts, an empty /tmp; the zygote runs no bot
code, holds no token and has no thread when it forks; the same seed gives the same record as a
cold launch.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from arena.engine import Rules
from arena.proto.codec import strip_timing
from arena.referee import TimeControl
from arena.sandbox import cgroups
from arena.sandbox.bundle import load_bundle
from arena.sandbox.bwrap import BwrapLauncher
from arena.sandbox.warm import WarmChild
from arena.workers.match import play_match
from tests.sandbox.sandbox_support import TIME_SCALE, make_bundle, warm_launcher

ROOT = Path(__file__).resolve().parents[2]
RANDOM = ROOT / "sample_bots" / "python" / "random"
CLOCK = TimeControl(startup=30.0 * TIME_SCALE)
#: What a fresh sandbox's /tmp holds: nothing, unless the checkout (so the venv and the SDK bound into
#: the sandbox at their own paths) lives under /tmp, as a CI clone may: bwrap then makes their parents.
FRESH_TMP = sorted(
    {
        p.parts[2]
        for p in (ROOT, Path(sys.prefix).resolve())
        if p.parts[:2] == ("/", "tmp") and len(p.parts) > 2
    }
)

#: Prints what it sees at start-up (its cgroup, uid, /tmp, whether a marker of an earlier match is
#: there), leaves a file in /tmp, then plays like the random bot.
PROBE = """\
import os
from arena.sdk import Bot, run
import ctypes
seen = os.path.exists("/tmp/probe-marker")
libc = ctypes.CDLL(None, use_errno=True)
mq = libc.mq_open(b"/arena-probe", os.O_CREAT | os.O_RDWR, 0o666, None)
print("PROBE", os.getuid(), sorted(os.listdir("/tmp")), "SEEN" if seen else "FRESH",
      "fds=" + ",".join(sorted(os.listdir("/proc/self/fd"))), f"mq={mq}:{ctypes.get_errno()}",
      "caps=" + ",".join(l.split()[1] for l in open("/proc/self/status") if l.startswith(("Cap", "NoNewPrivs"))),
      open("/proc/self/cgroup").read().replace(chr(10), " "), flush=True)
MARK = False
if MARK:
    open("/tmp/probe-marker", "w").write("x")
class Probe(Bot):
    def play(self, view):
        return self.rng.choice(view.legal)
run(Probe())
"""


class Keeper:
    """Passes launches through and keeps every handle."""

    def __init__(self, inner: BwrapLauncher) -> None:
        self.inner, self.name, self.handles = inner, inner.name, []

    def launch(self, spec):
        handle = self.inner.launch(spec)
        self.handles.append((spec.label, handle))
        return handle

    def build(self, bundle, limits):
        return self.inner.build(bundle, limits)


@pytest.fixture
def warm():
    launcher = warm_launcher()
    yield launcher
    launcher.warm.close()


def play(launcher, a, b, seed=1, clock=CLOCK, **kw):
    return play_match(
        (a, b), rules=Rules(max_deals=1), seed=seed, time_control=clock, launcher=launcher, **kw
    )


def output_of(outcome, seat: int) -> str:
    return "\n".join(e.text for e in outcome.record.logs if e.seat == seat and e.source == "output")


def comparable(record) -> bytes:
    out = strip_timing(record)
    for name in ("match_id", "commitment", "salt"):
        out.ClearField(name)
    return out.SerializeToString(deterministic=True)


def test_each_match_is_a_fresh_child_in_its_own_cgroup_and_uid(warm, tmp_path) -> None:
    probe = load_bundle(make_bundle(tmp_path / "probe", PROBE, name="probe"))
    keeper = Keeper(warm)
    outcomes = [play(keeper, probe, load_bundle(RANDOM), seed=s) for s in (1, 2)]
    assert [o.verdicts for o in outcomes] == [("OK", "OK")] * 2
    handles = [h for _, h in keeper.handles]
    assert all(isinstance(h, WarmChild) for h in handles)
    assert len({h.pid for h in handles}) == 4 and len({h.cgroup.name for h in handles}) == 4
    assert len({h.uid for h in handles}) >= 2 and 0 not in {h.uid for h in handles}
    for h in handles:
        assert (h.cpu_seconds() or 0) > 0  # the bot's CPU was charged to its own leaf
        assert cgroups.leftovers(h.cgroup.name) == []  # and the leaf is gone with the match
    zygotes = warm.warm.zygotes()
    assert len(zygotes) == 2 and sorted(z.served for z in zygotes) == [2, 2]
    assert {h.zygote for h in handles} == set(zygotes)  # one zygote per bundle served both matches
    assert all(z.threads == 1 for z in zygotes)  # gRPC started no thread in the zygote before fork
    for outcome, (label, handle) in zip(outcomes, keeper.handles[::2], strict=True):
        line = next(x for x in output_of(outcome, 0).splitlines() if x.startswith("PROBE"))
        # the child was in the match's leaf before the bot's first line ran, under its own uid
        assert handle.cgroup.name in line and line.split()[1] == str(handle.uid)
        assert "FRESH" in line and str(FRESH_TMP) in line
        # stdin, the output pipe twice and the fd listing itself: not the zygote's control socket
        # nor the channel its exit is reported on
        assert "fds=0,1,2,3 " in line, line
        # nor a POSIX message queue, which would outlive the child in the IPC namespace it shares
        assert f"mq=-1:{errno.EPERM} " in line, line
        # no capability in any set (inheritable, permitted, effective, bounding, ambient), as setpriv
        # leaves a cold bot, and no_new_privs
        assert "caps=" + ",".join(["0000000000000000"] * 5) + ",1 " in line, line
        assert label.endswith("seat0")
    for z in zygotes:  # the zygote never plays: no seat token in its environment
        environ = Path(f"/proc/{z.proc.child_pid()}/environ").read_bytes()
        assert b"ARENA_TOKEN" not in environ


def test_same_seed_gives_the_same_record_warm_and_cold(warm) -> None:
    random = load_bundle(RANDOM)
    cold = BwrapLauncher(warm=False)
    got = [comparable(play(launcher, random, random, seed=77).record) for launcher in (cold, warm, warm)]
    assert got[0] == got[1] == got[2]


def test_a_dirty_sandbox_is_replaced_not_reused(warm, tmp_path) -> None:
    """A bot that leaves a file in /tmp: the next match gets a fresh zygote and an empty /tmp."""
    marking = PROBE.replace("MARK = False", "MARK = True")
    probe = load_bundle(make_bundle(tmp_path / "probe", marking, name="probe"))
    random = load_bundle(RANDOM)
    first = play(warm, probe, random, seed=3)
    zygote = warm.warm.zygote_for(probe.path)
    assert zygote is not None and zygote.served == 1
    keeper = Keeper(warm)
    second = play(keeper, probe, random, seed=4)
    assert first.verdicts == second.verdicts == ("OK", "OK")
    assert "FRESH" in output_of(first, 0) and "FRESH" in output_of(second, 0)
    assert "SEEN" not in output_of(second, 0)
    seat0 = keeper.handles[0][1]
    assert isinstance(seat0, WarmChild) and seat0.zygote is not zygote  # replaced, still warm
    assert zygote.proc.exit_status() is not None


def test_zygote_is_started_as_bot_would_be_and_left_alone_by_other_bundles(warm, tmp_path) -> None:
    """A bundle the zygote cannot run (not `python3 SCRIPT.py`) launches cold, as before."""
    other = make_bundle(tmp_path / "shell", "", name="sh")
    (other / "bot.toml").write_text('name = "sh"\nlanguage = "python"\nrun = ["python3", "-c", "pass"]\n')
    keeper = Keeper(warm)
    outcome = play(keeper, load_bundle(other), load_bundle(RANDOM))
    assert outcome.verdicts[1] == "OK"
    kinds = [type(h).__name__ for _, h in keeper.handles]
    assert kinds == ["BwrapProcess", "WarmChild"]
    assert os.path.isdir(warm.warm.zygotes()[0].dir)


def test_a_script_the_zygote_cannot_compile_launches_cold_with_the_cold_verdict(warm, tmp_path) -> None:
    broken = load_bundle(make_bundle(tmp_path / "broken", "def play(:\n", name="broken"))
    random = load_bundle(RANDOM)
    keeper = Keeper(warm)
    got = [play(keeper, broken, random, seed=s).verdicts for s in (5, 6)]
    want = play(BwrapLauncher(warm=False), broken, random, seed=5).verdicts
    assert got == [want, want] and want[0] != "OK"
    assert [type(h).__name__ for _, h in keeper.handles[::2]] == ["BwrapProcess", "BwrapProcess"]
    assert warm.warm.zygote_for(broken.path) is None  # none is kept for it
