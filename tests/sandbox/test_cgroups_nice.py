"""A niced launcher's bots yield the cores as the launcher does (the players of `arena serve`,
`--players-nice`): a bot's cgroup is a scheduling group of its own, where the niceness it inherits
weighs nothing against tasks outside it, so its group's weight carries the niceness instead. Real
groups on this machine's cgroup hierarchy, made by a child process at each niceness."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.sandbox import cgroups

# A process at niceness argv[1] makes a bot's group, says where its cpu part is and what that part's
# parent weighs, and removes it.
MAKE = """
import json, os, sys
os.nice(int(sys.argv[1]))
from pathlib import Path
from arena.sandbox import cgroups
group = cgroups.create(64 << 20, 16, "nicetest")
try:
    if cgroups.version() == "v2":
        leaf = Path(cgroups.detect().base) / group.name
        print(json.dumps({"weight": int((leaf / "cpu.weight").read_text())}))
    else:
        cpu = next(p for p in group.paths() if p.parent.parent.name == "cpu")
        print(json.dumps({"parent": cpu.parent.name, "shares": int((cpu.parent / "cpu.shares").read_text())}))
finally:
    group.remove()
"""


def _cpu_groups() -> bool:
    host = cgroups.detect()
    if host.version == "v2":
        return "cpu" in host.kinds and host.base is not None
    return host.version in ("v1", "hybrid") and (cgroups.ROOT / "cpu" / "cgroup.procs").exists()


pytestmark = pytest.mark.skipif(not _cpu_groups(), reason="no writable cpu cgroup here (run as root)")


def _made_at(nice: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", MAKE, str(nice)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_niced_launchers_bots_weigh_what_its_niceness_weighs() -> None:
    plain, niced = _made_at(0), _made_at(10)
    if cgroups.version() == "v2":
        assert plain["weight"] == 100
        assert niced["weight"] == 11  # 100 scaled as nice 10 scales a task: 110/1024
        return
    assert plain == {"parent": "elfern-arena", "shares": 8192}  # ahead of other work (fair clocks)
    assert niced == {"parent": "elfern-arena-nice10", "shares": 880}  # 8192 scaled by 110/1024
    assert niced["shares"] < 1024  # below one task at the server's own niceness


def test_the_weights_follow_the_kernels_table() -> None:
    assert cgroups.NICE_WEIGHT[0] == 1024 and cgroups.NICE_WEIGHT[10] == 110 and cgroups.NICE_WEIGHT[19] == 15
    assert cgroups.scaled_weight(8192, 0) == 8192
    assert cgroups.scaled_weight(8192, 10) == 880
    assert cgroups.scaled_weight(100, 19) == 1  # never 0: the kernel refuses it


# A process at niceness 10 makes a bot's group and exits without removing it, as a killed referee does.
LEAVE = """
import os
os.nice(10)
from arena.sandbox import cgroups
group = cgroups.create(64 << 20, 16, "nicestale")
print(group.name, flush=True)
os._exit(0)
"""


@pytest.mark.skipif(
    cgroups.version() == "v2", reason="v1 keeps a niced launcher's bots in a parent of their own"
)
def test_a_dead_niced_launchers_groups_are_swept_by_the_next_launcher() -> None:
    out = subprocess.run([sys.executable, "-c", LEAVE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    name = out.stdout.strip()
    left = cgroups.ROOT / "cpu" / "elfern-arena-nice10" / name
    assert left.is_dir()  # its owner is gone, its group stayed
    swept = cgroups.sweep_stale()
    assert f"cpu/{name}" in swept and not left.exists()
