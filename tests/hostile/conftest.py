"""Fixtures for the hostile-bot suite: a recording bwrap launcher, a TCP listener, file snapshots."""

from __future__ import annotations

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
        self.direct_stdio = inner.direct_stdio
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
            if cg is not None and cg.paths():
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


@pytest.fixture
def listener():
    from arena.sandbox.check import Listener

    lis = Listener()
    yield lis
    lis.close()
