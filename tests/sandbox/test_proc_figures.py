"""Host-wide /proc figures a bot could modulate are static inside the sandbox (a covert channel).

The bot reads them, the host then changes (more threads, memory touched, CPU burnt), the bot
reads again: every figure is the same, and none is the host's. The runtimes still work."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
from pathlib import Path

from sandbox_support import make_bundle

from arena.sandbox import procmask
from arena.sandbox.bundle import load_bundle
from arena.sandbox.launcher import LaunchSpec, Limits

FILES = ["loadavg", "stat", "meminfo", "uptime", "cpuinfo", *procmask.EMPTY, *procmask.SYS_FIXED]

BOT = f"""
import json, os, socket
FILES = {FILES!r}
def reading():
    out = {{}}
    for name in FILES:
        try:
            with open("/proc/" + name) as fh:
                out[name] = fh.read()
        except OSError as exc:
            out[name] = "absent:" + type(exc).__name__
    out["pressure"] = sorted(os.listdir("/proc/pressure")) if os.path.isdir("/proc/pressure") else "absent"
    out["sys"] = os.path.exists("/sys/fs/cgroup") or os.path.exists("/sys/devices/system/cpu")
    out["cpu_count"] = os.cpu_count()
    return out
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["ARENA_ADDRESS"][7:])
f = s.makefile("rwb")
f.write(json.dumps(reading()).encode() + b"\\n"); f.flush()
assert f.readline() == b"go\\n"
f.write(json.dumps(reading()).encode() + b"\\n"); f.flush()
"""


def _host(name: str) -> str:
    return Path("/proc", name).read_text()


def test_host_wide_proc_figures_do_not_move_inside_the_sandbox(bwrap, tmp_path):
    seat = tmp_path / "seat0"
    seat.mkdir()
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(seat / "referee.sock"))
    srv.listen()
    srv.settimeout(60)
    limits = Limits(memory=256 * 1024 * 1024)
    bundle = load_bundle(make_bundle(tmp_path / "b", BOT))
    proc = bwrap.launch(LaunchSpec(bundle, seat / "referee.sock", limits=limits))
    release = threading.Event()
    threads: list[threading.Thread] = []
    try:
        conn, _ = srv.accept()
        f = conn.makefile("rwb")
        first = json.loads(f.readline())
        host_before = {n: _host(n) for n in ("loadavg", "stat", "meminfo", "uptime")}
        # move the host's figures: 40 more threads, 64 MiB touched, some CPU burnt
        threads = [threading.Thread(target=release.wait) for _ in range(40)]
        for t in threads:
            t.start()
        ballast = bytearray(64 * 1024 * 1024)
        for i in range(0, len(ballast), 4096):
            ballast[i] = 1
        end = time.process_time() + 0.2
        while time.process_time() < end:
            pass
        host_after = {n: _host(n) for n in ("loadavg", "stat", "meminfo", "uptime")}
        f.write(b"go\n")
        f.flush()
        second = json.loads(f.readline())
    finally:
        release.set()
        for t in threads:
            t.join()
        deadline = time.monotonic() + 20
        while proc.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.kill()
        srv.close()
    assert proc.exit_status() == 0, proc.output()
    # the host's figures did move (so the test can tell), the bot's did not
    assert host_before["loadavg"].split()[3] != host_after["loadavg"].split()[3]
    assert host_before["stat"] != host_after["stat"]
    assert first == second
    for name in ("loadavg", "stat", "meminfo", "uptime"):
        assert not first[name].startswith("absent:"), name
        assert first[name] != host_after[name], name
    assert first["loadavg"] == "0.00 0.00 0.00 1/1 1\n"
    assert re.search(r"(?m)^MemTotal: +262144 kB$", first["meminfo"])  # the bot's own cap, not the host's RAM
    assert all(first[n] == "" for n in procmask.EMPTY if os.path.exists(f"/proc/{n}"))
    assert first["pressure"] in ([], "absent") and first["sys"] is False
    assert first["cpu_count"] == os.cpu_count()  # glibc counts the CPU lines of the static /proc/stat


def test_the_static_stat_keeps_the_cpu_lines_and_meminfo_the_cap(tmp_path):
    args = procmask.mask_args(tmp_path, 128 * 1024 * 1024)
    binds = dict(zip(args[2::3], args[1::3], strict=True))
    assert binds["/proc/loadavg"] and binds["/proc/stat"] and binds["/proc/meminfo"]
    stat_text = Path(binds["/proc/stat"]).read_text()
    host_cpus = [ln.split()[0] for ln in _host("stat").splitlines() if ln[:3] == "cpu" and ln[3].isdigit()]
    assert [
        ln.split()[0] for ln in stat_text.splitlines() if ln[:3] == "cpu" and ln[3].isdigit()
    ] == host_cpus
    assert re.search(r"(?m)^MemTotal: +131072 kB$", Path(binds["/proc/meminfo"]).read_text())
    assert "cpu MHz" not in Path(binds["/proc/cpuinfo"]).read_text() or all(
        ln.endswith(": 1000.000")
        for ln in Path(binds["/proc/cpuinfo"]).read_text().splitlines()
        if "MHz" in ln
    )
