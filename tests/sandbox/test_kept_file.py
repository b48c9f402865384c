"""`cgroups.KeptFile`: a bot's CPU read through one kept descriptor (the fair clock's watch reads it
twice a move) gives the kernel's current figure on every read, and nothing once its group is gone."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.sandbox import cgroups
from arena.sandbox.cgroups import KeptFile


def test_every_read_is_the_file_as_it_is_now_and_a_closed_one_reads_empty(tmp_path: Path) -> None:
    f = tmp_path / "usage"
    f.write_text("100\n")
    kept = KeptFile(f)
    assert kept.read() == "100\n"
    f.write_text("250\n")  # the same inode, rewritten: what the kernel does to a control file
    assert kept.read() == "250\n"
    kept.close()
    assert kept.read() == ""
    assert KeptFile(tmp_path / "gone").read() == ""


def test_a_bots_cpu_grows_between_reads_of_one_descriptor_and_is_none_once_removed() -> None:
    group = cgroups.create(256 * 1024 * 1024, 16, "kept-file-test")
    if group is None:
        pytest.skip("no writable cgroup here (needs root and a cgroup hierarchy)")
    spin = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\nwhile True: pass"])
    try:
        for procs in group.procs_files():
            Path(procs).write_text(str(spin.pid))
        readings = []
        for _ in range(3):
            time.sleep(0.2)
            readings.append(group.cpu_seconds())
        assert all(r is not None for r in readings)
        assert readings[0] < readings[1] < readings[2]  # type: ignore[operator]
    finally:
        spin.kill()
        spin.wait()
        group.remove()
    assert group.cpu_seconds() is None
