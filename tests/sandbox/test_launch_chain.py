"""The launch helper (arena/sandbox/_launch.c): a bot started through it is the same process, seen
from inside, as one started through the chain it replaces (setpriv, sh, sh, prlimit, bwrap,
setpriv), and the helper's own steps each hold (death signal, parent check, cgroup join, rlimits,
uid switch). Real bwrap, real cgroups."""

from __future__ import annotations

import os
import subprocess

import pytest
from sandbox_support import make_bundle, wait_exit

from arena.sandbox import launch_helper, spawn
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import Limits

#: What a bot sees of its own identity and limits (PPid and the pid-namespace figures differ by design).
SELF = """
import os
status = {}
for line in open("/proc/self/status"):
    key, _, value = line.partition(":")
    if key in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
               "Seccomp", "Seccomp_filters"):
        status[key] = value.split()
limits = [line.rstrip() for line in open("/proc/self/limits")]
print(repr((status, limits, sorted(open("/proc/self/cgroup").read().split()))))
"""


def _helper() -> None:
    if launch_helper.path() is None:
        pytest.skip("the launch helper is not built here (no C compiler): launches take the old chain")


def _seen_from_inside(launcher, bundle) -> tuple:
    proc = launcher.start(bundle, ["python3", "bot.py"], {}, Limits(), socket_path=None)
    try:
        assert wait_exit(proc) == 0, proc.output()
        status, limits, cgroup = eval(proc.output().strip().splitlines()[-1])  # our own output
        if launcher.privileged:
            assert status["Uid"] == [str(proc.uid)] * 4 and status["Gid"] == [str(proc.uid)] * 4
            status["Uid"] = status["Gid"] = "the bot's own"  # each launch leases its own uid
        if proc.cgroup is not None and proc.cgroup.has("cpu"):
            assert (proc.cgroup.cpu_seconds() or 0) > 0  # the chain joined the bot's leaf: its CPU is there
        return status, limits, cgroup
    finally:
        proc.kill()


def test_a_bot_started_through_the_helper_is_the_one_the_old_chain_started(bwrap, tmp_path):
    from arena.sandbox.bwrap import BwrapLauncher

    _helper()
    bundle = load_bundle(make_bundle(tmp_path / "b", SELF))
    new = _seen_from_inside(bwrap, bundle)
    old = _seen_from_inside(BwrapLauncher(helper=False), bundle)
    assert new == old
    status, limits, _cgroup = new
    if bwrap.privileged:
        assert status["Groups"] == [] and status["NoNewPrivs"] == ["1"] and status["Seccomp"] == ["2"]
        assert {status[k][0] for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")} == {
            "0000000000000000"
        }
    assert any("Max cpu time" in line and "120" in line and "122" in line for line in limits)


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_the_helper_refuses_a_parent_that_is_not_the_launcher_and_sets_its_death_signal():
    _helper()
    helper = str(launch_helper.path())
    # sh forks the helper as its own child: its parent is sh, not this process
    done = _run(["sh", "-c", '"$@"; echo "status $?"', "sh", *spawn.guarded(["echo", "it-ran"])])
    assert done.stdout.strip() == "status 137"
    read = (
        "import ctypes,signal; s=ctypes.c_int(); ctypes.CDLL(None).prctl(2, ctypes.byref(s)); print(s.value)"
    )
    mine = _run([helper, "--parent", str(os.getpid()), "--", "/usr/bin/python3", "-c", read])
    assert mine.returncode == 0 and mine.stdout.strip() == "9"  # PR_GET_PDEATHSIG: SIGKILL


def test_the_helpers_rlimits_and_refusals(tmp_path):
    _helper()
    helper = str(launch_helper.path())
    show = "import resource as r; print(r.getrlimit(r.RLIMIT_CPU), r.getrlimit(r.RLIMIT_NOFILE))"
    out = _run(
        [helper, "--rlimit", "cpu=7:9", "--rlimit", "nofile=64:64", "--", "/usr/bin/python3", "-c", show]
    )
    assert out.stdout.strip() == "(7, 9) (64, 64)"
    for bad in (
        ["--rlimit", "cpu=9:7"],
        ["--rlimit", "stack=1:1"],
        ["--parent", "x"],
        ["--uid", "0"],
        ["--what", "1"],
    ):
        refused = _run([helper, *bad, "--", "/usr/bin/true"])
        assert refused.returncode == 126, (bad, refused)
    assert (
        _run([helper, "--join", str(tmp_path / "none" / "cgroup.procs"), "--", "/usr/bin/true"]).returncode
        == 125
    )
    assert _run([helper, "--", str(tmp_path / "missing")]).returncode == 127


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid switch needs root")
def test_the_helpers_uid_switch_leaves_no_capability_and_no_group():
    _helper()
    show = (
        "import os; print(os.getresuid(), os.getresgid(), os.getgroups(), open('/proc/self/status').read())"
    )
    out = _run([str(launch_helper.path()), "--uid", "20999", "--", "/usr/bin/python3", "-c", show])
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("(20999, 20999, 20999) (20999, 20999, 20999) []")
    caps = {line.split(":")[0]: line.split()[1] for line in out.stdout.splitlines() if line.startswith("Cap")}
    assert set(caps) == {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} and set(caps.values()) == {
        "0" * 16
    }


def test_the_kept_bwrap_arguments_follow_a_covering_file_removed_between_launches(tmp_path):
    """bwrap_args keeps the /proc covers' arguments per process; a cover removed meanwhile (a cleaned
    state dir) is written again before the next launch rather than failing it."""
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable

    try:
        launcher = BwrapLauncher(state_dir=tmp_path / "state")
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    bundle = load_bundle(make_bundle(tmp_path / "b", "print(open('/proc/loadavg').read())"))
    for _ in range(2):
        proc = launcher.start(bundle, ["python3", "bot.py"], {}, Limits(), socket_path=None)
        try:
            assert wait_exit(proc) == 0, proc.output()
            assert proc.output().startswith("0.00 0.00 0.00")
        finally:
            proc.kill()
        (tmp_path / "state" / "proc" / "loadavg").unlink()
