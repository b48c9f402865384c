"""The `local` launcher: a plain child process with no isolation. For bot authors on their own
machine only; it warns once, because a hostile bot launched this way can do anything you can.

Bots and builds are started through `spawn` so that they die with the referee, even one that is
SIGKILLed (docs/sandbox.md, "Cleanup").
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import sys
import warnings
from pathlib import Path

from arena.sandbox import procstat, sockets, spawn
from arena.sandbox.building import await_build, build_once
from arena.sandbox.bundle import Bundle
from arena.sandbox.capture import OutputCapture
from arena.sandbox.failed import BuildFailedProcess, build_first
from arena.sandbox.launcher import STDIO_ENV, LaunchSpec, Limits
from arena.sandbox.stdio_pipes import announced, popen_streams, split_streams

WARNING = "the local launcher runs bots without any isolation; use it only for bots you trust"
log = logging.getLogger("arena.sandbox")
_told_unguarded = False


def start(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, stdio: bool = False
) -> subprocess.Popen[bytes]:
    """`argv` in its own session (so its group can be paused and killed), output piped, made to die
    with this process. A command that does not exist raises FileNotFoundError here, as Popen would,
    rather than from inside the wrapper. `stdio`: stdin and stdout are the stdio protocol's pipes
    (STARTED_LINE written on the latter first), stderr alone is the output."""
    global _told_unguarded
    if not argv:
        raise FileNotFoundError("empty command")
    path = (env or os.environ).get("PATH", os.defpath)
    found = str(cwd / argv[0]) if "/" in argv[0] else shutil.which(argv[0], path=path)
    if found is None or not os.access(found, os.X_OK) or os.path.isdir(found):
        raise FileNotFoundError(f"no such command: {argv[0]!r}")
    if not spawn.guardable() and not _told_unguarded:
        _told_unguarded = True
        log.warning("setpriv is missing: local bots will outlive a referee that is killed")
    return spawn.popen(
        args=spawn.guarded(announced(argv) if stdio else argv),
        cwd=cwd,
        env=env,
        **popen_streams(stdio),
        start_new_session=True,
    )


def _kill_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class LocalProcess:
    """A bot started in its own session, so the whole process group can be paused and killed."""

    def __init__(self, proc: subprocess.Popen[bytes], stdio: bool, log_bytes: int) -> None:
        self._proc = proc
        output, protocol = split_streams(proc, stdio)
        self._capture = OutputCapture(output, log_bytes)
        self.protocol_pipes = (
            protocol  # a stdio bot's (stdin, stdout), for the referee (arena.referee.stdio_seat)
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def exit_status(self) -> int | None:
        return self._proc.poll()

    def failure_verdict(self) -> str | None:
        return None

    def output_tail(self, max_lines: int = 20) -> str:
        return self._capture.tail(max_lines, exited=self._proc.poll() is not None)

    def output(self) -> str:
        return self._capture.text(exited=self._proc.poll() is not None)

    @property
    def output_bytes(self) -> int:
        """Everything it wrote, including what the cap dropped (the build watcher's progress)."""
        return self._capture.total

    def cpu_seconds(self) -> float | None:
        return procstat.cpu_seconds(self._proc.pid)

    def pause(self) -> None:
        _kill_group(self._proc, signal.SIGSTOP)

    def resume(self) -> None:
        _kill_group(self._proc, signal.SIGCONT)

    def kill(self) -> None:
        _kill_group(self._proc, signal.SIGKILL)
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self._capture.join()


class LocalLauncher:
    name = "local"
    direct_stdio = True  # a stdio bot's pipes go to the referee (arena.referee.stdio_seat), no bridge

    def __init__(self, warn: bool = True) -> None:
        if warn:
            warnings.warn(WARNING, stacklevel=2)

    def launch(self, spec: LaunchSpec) -> LocalProcess | BuildFailedProcess:
        """Builds first when the bundle has an unbuilt build step; a failed build -> BUILD_FAILED."""
        failed = build_first(self, spec)
        if failed is not None:
            return failed
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/tmp"),
            "LANG": "C.UTF-8",
            # Let `python3` in a bundle's run line find the arena SDK when run from a checkout.
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        stdio = spec.bundle.protocol == "stdio"  # the referee speaks its lines: no socket, no token
        if stdio:
            env.update(STDIO_ENV)
        else:
            env.update({**spec.env, "ARENA_ADDRESS": f"unix://{spec.socket_path}"})
            sockets.make_private(spec.socket_path, None)  # same uid as ours: 0700 directory, 0600 socket
        argv = list(spec.bundle.run)
        if argv and argv[0] in ("python3", "python"):
            argv[0] = sys.executable
        proc = start(argv, spec.bundle.path, env, stdio=stdio)
        return LocalProcess(proc, stdio, spec.limits.log_bytes)

    def build(self, bundle: Bundle, limits: Limits) -> tuple[bool, str]:
        """Run `build` once per staged bundle content (unsandboxed!); success is recorded."""
        return build_once(bundle, limits, _run_build)


def _run_build(bundle: Bundle, limits: Limits) -> tuple[bool, str]:
    """The build in its own session, its output captured (capped) and shown live to a watcher."""
    try:
        proc = start(list(bundle.build or ()), bundle.path)
    except OSError as exc:
        return False, f"build command could not start: {exc}"
    built = LocalProcess(proc, False, limits.log_bytes)
    return await_build(built, bundle, limits, restore=False, poll=0.02)
