"""Helpers for the sandbox tests."""

from __future__ import annotations

import os
import time
from pathlib import Path

#: Deadlines in these tests are multiplied by this: the cgroup v2 lane may run them in an emulated
#: (TCG) VM, many times slower than the host (scripts/cgroup2-guest.sh sets it).
TIME_SCALE = float(os.environ.get("ARENA_TEST_TIME_SCALE", "1"))


def make_bundle(root: Path, code: str, toml_extra: str = "", name: str = "t") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bot.py").write_text(code)
    (root / "bot.toml").write_text(
        f'name = "{name}"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n{toml_extra}'
    )
    os.chmod(root, 0o755)
    return root


def wait_exit(proc, timeout=30.0):
    deadline = time.monotonic() + timeout * TIME_SCALE
    while proc.exit_status() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc.exit_status()


def in_cgroup(name: str) -> list[int]:
    """Every host process whose cgroup path names `name`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if name in Path(f"/proc/{entry}/cgroup").read_text():
                    found.append(int(entry))
            except OSError:
                pass
    return found


def warm_launcher():
    """A warm-starting BwrapLauncher, or the test is skipped saying why this host cannot warm-start."""
    import pytest

    from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable

    try:
        launcher = BwrapLauncher(warm=True)
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    if launcher.warm is None:
        pytest.skip("the warm start needs root and a writable cgroup hierarchy")
    return launcher
