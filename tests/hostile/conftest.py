"""Fixtures for the hostile-bot suite: a recording bwrap launcher, a TCP listener, file snapshots."""

from __future__ import annotations

import socket
import threading

import pytest


def _bwrap_or_skip():
    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable

    try:
        return BwrapLauncher()
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")


class RecordingLauncher:
    """Delegates to the bwrap launcher and remembers every handle and what ran in its cgroup."""

    name = "bwrap"

    def __init__(self, inner) -> None:
        self.inner = inner
        self.handles: list = []
        self.pids: set[int] = set()
        self.cgroups: list[str] = []

    def launch(self, spec):
        handle = self.inner.launch(spec)
        self.handles.append(handle)
        cg = getattr(handle, "cgroup", None)
        if cg is not None:
            self.cgroups.append(cg.name)
        original_kill = handle.kill

        def kill() -> None:
            cg = getattr(handle, "cgroup", None)
            if cg is not None and cg.dirs:
                self.pids.update(cg.pids())
            pid = getattr(handle, "child_pid", lambda: None)()
            if pid:
                self.pids.add(pid)
            original_kill()

        handle.kill = kill
        return handle

    def build(self, bundle, limits):
        return self.inner.build(bundle, limits)


@pytest.fixture
def recording_launcher() -> RecordingLauncher:
    return RecordingLauncher(_bwrap_or_skip())


class Listener:
    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.seen: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            conn.settimeout(0.5)
            try:
                self.seen.append(conn.recv(1024) or b"<connected>")
            except OSError:
                self.seen.append(b"<connected>")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1)
        self.sock.close()


@pytest.fixture
def listener():
    lis = Listener()
    yield lis
    lis.close()
