"""The bwrap launcher, driven directly: reachability of the referee socket, isolation, limits and
their verdicts, pause/resume, cleanup (also when the referee is SIGKILLed), and the build step."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
from sandbox_support import TIME_SCALE, make_bundle, wait_exit

from arena.sandbox.bundle import load_bundle
from arena.sandbox.check import ISOLATION, probe_bundle
from arena.sandbox.launcher import BUILD_FAILED, CPU_LIMIT, MEMORY_LIMIT, PIDS_LIMIT, LaunchSpec, Limits

MiB = 1024 * 1024


CONNECT = """
import os, socket, sys
path = os.environ["ARENA_ADDRESS"].removeprefix("unix://")
s = socket.socket(socket.AF_UNIX); s.connect(path); s.sendall(b"hi"); print(s.recv(16).decode())
import grpc, arena.sdk
print("sdk ok", os.getuid(), os.environ["ARENA_TOKEN"], os.getcwd())
"""


def test_bot_reaches_referee_socket_with_sdk_importable(bwrap, tmp_path, echo_socket):
    bundle = load_bundle(make_bundle(tmp_path / "b", CONNECT))
    proc = bwrap.launch(LaunchSpec(bundle, echo_socket, env={"ARENA_TOKEN": "tok-1"}))
    try:
        assert wait_exit(proc) == 0, proc.output()
        out = proc.output()
        assert "ack:hi" in out and "sdk ok" in out and "tok-1 /bot" in out
        uid = int(out.split("sdk ok ")[1].split()[0])
        assert uid == proc.uid and (uid >= 20001 if bwrap.privileged else True)
        assert proc.failure_verdict() is None
    finally:
        proc.kill()


def test_isolation_probe_finds_nothing_open(bwrap, tmp_path):
    bundle = probe_bundle(tmp_path / "probe")
    env = {"ARENA_PROBE": "isolation", "ARENA_PROBE_HIDDEN": f"{tmp_path}:{Path.cwd() / '.git'}"}
    procs = [bwrap.start(bundle, ["python3", "probe.py"], env, Limits(), socket_path=None) for _ in range(2)]
    try:
        for proc in procs:
            assert wait_exit(proc) == 0, proc.output()
        findings = json.loads(procs[0].output().strip().splitlines()[-1])
        optional = {"seccomp", "ptrace", "user_namespace"} if not bwrap.use_seccomp else set()
        failed = {k: findings[k] for k, _, _ in ISOLATION if k not in optional and not findings[k]["ok"]}
        assert failed == {}
        if bwrap.privileged:
            assert procs[0].uid != procs[1].uid
    finally:
        for proc in procs:
            proc.kill()


@pytest.mark.parametrize(
    "mode, limits, verdict",
    [
        ("fork", Limits(pids=32), PIDS_LIMIT),
        ("memory", Limits(memory=96 * MiB), MEMORY_LIMIT),
        ("cpu", Limits(cpu_seconds=1), CPU_LIMIT),
    ],
)
def test_limits_end_in_named_verdicts(bwrap, tmp_path, mode, limits, verdict):
    bundle = probe_bundle(tmp_path / "probe")
    proc = bwrap.start(bundle, ["python3", "probe.py"], {"ARENA_PROBE": mode}, limits, socket_path=None)
    try:
        assert wait_exit(proc) is not None
        assert proc.failure_verdict() == verdict, proc.output_tail()
    finally:
        proc.kill()
    assert proc.failure_verdict() == verdict  # still known after the cgroup is gone


def test_tmp_is_a_capped_tmpfs(bwrap, tmp_path):
    proc = bwrap.start(
        probe_bundle(tmp_path / "probe"),
        ["python3", "probe.py"],
        {"ARENA_PROBE": "tmpfill"},
        Limits(tmp_size=2 * MiB),
        socket_path=None,
    )
    try:
        assert wait_exit(proc) == 0
        result = json.loads(proc.output().strip().splitlines()[-1])
        assert result["bytes"] <= 2 * MiB and result["error"] == "No space left on device"
    finally:
        proc.kill()


def test_pause_freezes_the_bot_and_resume_continues(bwrap, tmp_path):
    proc = bwrap.start(
        probe_bundle(tmp_path / "probe"),
        ["python3", "probe.py"],
        {"ARENA_PROBE": "cpu"},
        Limits(cpu_seconds=60),
        socket_path=None,
    )
    try:
        deadline = time.monotonic() + 20 * TIME_SCALE
        while (proc.cpu_seconds() or 0) < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        while proc.cgroup is not None and not proc.pondered and time.monotonic() < deadline:
            proc.pause()  # at first a pause only watches: the spin shows that the bot ponders
            time.sleep(0.05)
            proc.resume()
        assert proc.pondered or proc.cgroup is None
        proc.pause()
        time.sleep(0.05)
        frozen_at = proc.cpu_seconds()
        time.sleep(0.3)
        assert proc.cpu_seconds() - frozen_at < 0.02
        proc.resume()
        while proc.cpu_seconds() < frozen_at + 0.1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.cpu_seconds() >= frozen_at + 0.1
    finally:
        proc.kill()


def _states(proc) -> set[str]:
    """The scheduler states (R, S, T...) of the bot's processes, read from the host's /proc."""
    found = set()
    for pid in proc.cgroup.pids():
        try:
            found.add(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0])
        except OSError:
            pass
    return found


def test_a_bot_that_waits_while_not_on_move_is_never_stopped(bwrap, tmp_path):
    if not bwrap.use_cgroups:
        pytest.skip("without cgroups every pause is a SIGSTOP: there is no CPU to watch")
    proc = bwrap.start(
        load_bundle(make_bundle(tmp_path / "w", "import time\nprint('up', flush=True)\ntime.sleep(600)\n")),
        ["python3", "bot.py"],
        {},
        Limits(),
        socket_path=None,
    )
    try:
        deadline = time.monotonic() + 20 * TIME_SCALE
        while "up" not in proc.output() and time.monotonic() < deadline:
            time.sleep(0.02)
        if proc.cgroup is None:
            pytest.skip("no cgroup for the bot here: every pause is a SIGSTOP")
        for _ in range(5):
            proc.pause()
            time.sleep(0.05)
            assert "T" not in _states(proc)  # watched, not stopped
            proc.resume()
        assert not proc.pondered
    finally:
        proc.kill()


def test_build_runs_once_in_the_sandbox_and_the_bot_uses_its_output(bwrap, tmp_path, echo_socket):
    code = "print(open('out.txt').read().strip(), flush=True)\n"
    build = 'build = ["sh", "-c", "echo compiled > out.txt && echo build-ran && id -u"]\n'
    author = make_bundle(tmp_path / "b", code, build)
    bundle = load_bundle(author)
    ok, log = bwrap.build(bundle, Limits())
    assert ok and "build-ran" in log, log
    assert bwrap.build(bundle, Limits()) == (True, log)  # cached: it does not run again
    proc = bwrap.launch(LaunchSpec(bundle, echo_socket))
    try:
        assert wait_exit(proc) == 0 and "compiled" in proc.output()
    finally:
        proc.kill()
    assert not (author / "out.txt").exists()  # the author's folder is never written
    assert (bundle.path / "out.txt").stat().st_uid == 0 if bwrap.privileged else True


def test_failed_build_gives_build_failed_with_its_log(bwrap, tmp_path, echo_socket):
    author = make_bundle(
        tmp_path / "b", "print(1)\n", 'build = ["sh", "-c", "echo missing-header.h; exit 2"]\n'
    )
    proc = bwrap.launch(LaunchSpec(load_bundle(author), echo_socket))
    assert proc.exit_status() is not None and proc.failure_verdict() == BUILD_FAILED
    assert "missing-header.h" in proc.output_tail() and "status 2" in proc.output_tail()


def test_output_is_capped_and_signals_are_reported(bwrap, tmp_path):
    code = "import os, signal\nos.write(1, b'z' * (1 << 20))\nos.kill(os.getpid(), signal.SIGTERM)\n"
    proc = bwrap.start(
        load_bundle(make_bundle(tmp_path / "f", code)),
        ["python3", "bot.py"],
        {},
        Limits(log_bytes=16 * 1024),
        socket_path=None,
    )
    try:
        assert wait_exit(proc) == -signal.SIGTERM
        proc.kill()
        assert proc.output_bytes >= 1 << 20 and len(proc.output()) <= 16 * 1024
    finally:
        proc.kill()


ESCAPER = """
import os
if os.fork() == 0:
    os.setsid()  # leaves the bot's process group, so SIGSTOP to the group misses it
    x = 0
    while True:
        x += 1
print("escaped", flush=True)
import time
time.sleep(600)
"""


def test_a_process_escaping_the_pause_is_caught_and_frozen(bwrap, tmp_path):
    proc = bwrap.start(
        load_bundle(make_bundle(tmp_path / "e", ESCAPER)),
        ["python3", "bot.py"],
        {},
        Limits(cpu_seconds=60),
        socket_path=None,
    )
    try:
        deadline = time.monotonic() + 20 * TIME_SCALE
        while "escaped" not in proc.output() and time.monotonic() < deadline:
            time.sleep(0.05)
        while proc.escaped_pause is False and time.monotonic() < deadline:
            proc.pause()
            time.sleep(0.1)
            proc.resume()
        assert proc.escaped_pause
        proc.pause()  # now with the freezer: nothing in the sandbox runs
        time.sleep(0.05)
        frozen_at = proc.cpu_seconds()
        time.sleep(0.3)
        assert proc.cpu_seconds() - frozen_at < 0.02
        proc.resume()
    finally:
        proc.kill()
