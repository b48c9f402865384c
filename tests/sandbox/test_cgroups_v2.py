"""The cgroup v2 backend on a real cgroup v2 kernel: the delegated subtree, each bot's leaf and its
caps, the verdicts read from memory.events / pids.events, CPU time from cpu.stat, cgroup.freeze and
cgroup.kill. These run inside the `make test-cgroup2` VM (Debian's kernel, cgroup_no_v1=all); on a
v1 or hybrid host they skip, since the kernel there has no v2 controllers to test."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from sandbox_support import TIME_SCALE, make_bundle

from arena.sandbox import cgroups
from arena.sandbox.bundle import load_bundle
from arena.sandbox.check import probe_bundle
from arena.sandbox.launcher import MEMORY_LIMIT, PIDS_LIMIT, Limits

MiB = 1024 * 1024

pytestmark = pytest.mark.skipif(
    cgroups.version() != "v2", reason="needs a cgroup v2 kernel: run `make test-cgroup2` (boots one)"
)

SLEEPER = "import time\nprint('up', flush=True)\ntime.sleep(600)\n"


def wait_for(cond, timeout=60.0, step=0.02):
    deadline = time.monotonic() + timeout * TIME_SCALE
    while not cond() and time.monotonic() < deadline:
        time.sleep(step)
    return cond()


def _keyed(path: Path, key: str) -> int:
    for line in path.read_text().splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    raise KeyError(key)


def test_the_arena_gets_a_subtree_with_memory_pids_and_cpu():
    host = cgroups.detect()
    assert host.version == "v2" and host.weak() == []
    assert set(host.kinds) == {"memory", "pids", "cpu", "freezer", "kill"}
    base = Path(host.base)
    assert {"memory", "pids", "cpu"} <= set((base / "cgroup.subtree_control").read_text().split())
    assert not (base / "cgroup.procs").read_text().split()  # no internal processes


def test_each_bot_runs_in_its_own_leaf_with_its_caps(bwrap, tmp_path):
    bundle = load_bundle(make_bundle(tmp_path / "s", SLEEPER))
    procs = [
        bwrap.start(bundle, ["python3", "bot.py"], {}, Limits(memory=96 * MiB, pids=40), socket_path=None)
        for _ in range(2)
    ]
    try:
        assert wait_for(lambda: all("up" in p.output() for p in procs))
        leaves = [p.cgroup.path for p in procs]
        assert leaves[0] != leaves[1] and all(leaf.parent == Path(cgroups.detect().base) for leaf in leaves)
        for proc, leaf in zip(procs, leaves, strict=True):
            assert (leaf / "memory.max").read_text().strip() == str(96 * MiB)
            assert (leaf / "pids.max").read_text().strip() == "40"
            assert (leaf / "cpu.weight").read_text().strip() == "100"
            assert (leaf / "memory.oom.group").read_text().strip() == "1"
            if (leaf / "memory.swap.max").exists():
                assert (leaf / "memory.swap.max").read_text().strip() == "0"
            child = proc.child_pid()
            assert f"0::/{leaf.relative_to(cgroups.ROOT)}" in Path(f"/proc/{child}/cgroup").read_text()
            stat = _keyed(leaf / "cpu.stat", "usage_usec") / 1e6
            assert 0 < proc.cpu_seconds() and abs(proc.cpu_seconds() - stat) < 0.05  # read from cpu.stat
    finally:
        for proc in procs:
            proc.kill()
    assert [path for leaf in leaves for path in cgroups.leftovers(leaf.name)] == []


def test_verdicts_come_from_memory_events_and_pids_events(bwrap, tmp_path):
    bundle = probe_bundle(tmp_path / "probe")
    fork = bwrap.start(
        bundle, ["python3", "probe.py"], {"ARENA_PROBE": "fork"}, Limits(pids=32), socket_path=None
    )
    mem = bwrap.start(
        bundle, ["python3", "probe.py"], {"ARENA_PROBE": "memory"}, Limits(memory=96 * MiB), socket_path=None
    )
    try:
        assert wait_for(lambda: fork.exit_status() is not None and mem.exit_status() is not None, 240)
        assert _keyed(fork.cgroup.path / "pids.events", "max") > 0
        assert _keyed(mem.cgroup.path / "memory.events", "oom_kill") > 0
        assert fork.failure_verdict() == PIDS_LIMIT, fork.output_tail()
        assert mem.failure_verdict() == MEMORY_LIMIT, mem.output_tail()
    finally:
        fork.kill()
        mem.kill()
    assert (fork.failure_verdict(), mem.failure_verdict()) == (PIDS_LIMIT, MEMORY_LIMIT)  # kept after removal


def test_cgroup_freeze_stops_the_whole_leaf_and_thaw_resumes(bwrap, tmp_path):
    proc = bwrap.start(
        probe_bundle(tmp_path / "probe"),
        ["python3", "probe.py"],
        {"ARENA_PROBE": "cpu"},
        Limits(cpu_seconds=600),
        socket_path=None,
    )
    try:
        assert wait_for(lambda: (proc.cpu_seconds() or 0) > 0.3, 120)
        cg = proc.cgroup
        assert cg.freeze()
        assert _keyed(cg.path / "cgroup.events", "frozen") == 1
        frozen_at = proc.cpu_seconds()
        time.sleep(0.5)
        assert proc.cpu_seconds() - frozen_at < 0.02
        assert cg.thaw()
        assert wait_for(lambda: proc.cpu_seconds() > frozen_at + 0.1, 60)
        assert _keyed(cg.path / "cgroup.events", "frozen") == 0
    finally:
        proc.kill()


DAEMONS = """
import os, time
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
print("daemons started", flush=True)
time.sleep(600)
"""


def test_cgroup_kill_takes_every_process_even_a_frozen_one(bwrap, tmp_path):
    proc = bwrap.start(
        load_bundle(make_bundle(tmp_path / "d", DAEMONS)),
        ["python3", "bot.py"],
        {},
        Limits(),
        socket_path=None,
    )
    assert wait_for(lambda: "daemons started" in proc.output(), 120)
    cg = proc.cgroup
    pids = cg.pids()
    assert len(pids) >= 5 and cg.has("kill")
    assert cg.freeze()  # a frozen leaf still dies of cgroup.kill
    proc.kill()
    assert proc.exit_status() is not None
    assert [pid for pid in pids if os.path.exists(f"/proc/{pid}")] == []
    assert cgroups.leftovers(cg.name) == [] and not cg.path.exists()
