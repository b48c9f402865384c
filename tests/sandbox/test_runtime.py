"""The lean bot runtime (arena/sandbox/runtime.py): a sandboxed Python bot imports the SDK, gRPC and
the simulation API, but its site-packages holds only their closure: no `.pth` file runs at its start
(the editable install's hook), and none of the arena's other dependencies is there. The whole-venv
runtime, kept as the benchmark's baseline, shows what the lean one leaves out."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import TIME_SCALE, make_bundle

from arena.sandbox.bundle import load_bundle
from arena.sandbox.bwrap import BwrapLauncher, SandboxUnavailable
from arena.sandbox.launcher import Limits

LOOK = """
import json, os, sys
import grpc, arena.sdk, arena.sdk.sim
site = [p for p in sys.path if p.endswith("site-packages")]
importable = {}
for name in ("numpy", "fastapi", "sqlalchemy", "arena.store", "arena.referee"):
    try:
        __import__(name)
        importable[name] = True
    except ImportError:
        importable[name] = False
print(json.dumps({
    "prefix": sys.prefix,
    "site": sorted(os.listdir(site[0])) if site else [],
    "hooks": sorted(m for m in sys.modules if "editable" in m or "distutils" in m),
    "importable": importable,
}))
"""


def _look(launcher: BwrapLauncher, tmp_path: Path) -> dict:
    bundle = load_bundle(make_bundle(tmp_path / "look", LOOK))
    proc = launcher.start(bundle, ["python3", "bot.py"], {}, Limits(), socket_path=None, label="look")
    try:
        deadline = time.monotonic() + 30 * TIME_SCALE
        while proc.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.exit_status() == 0, proc.output()
        return json.loads(proc.output().strip().splitlines()[-1])
    finally:
        proc.kill()


def test_lean_runtime_holds_only_the_sdk_closure(bwrap, tmp_path):
    if sys.prefix == sys.base_prefix:
        pytest.skip("the arena runs from no virtualenv here: there is no venv to make lean")
    try:
        whole = BwrapLauncher(full_venv=True)
    except SandboxUnavailable as exc:
        pytest.skip(f"bwrap sandbox unavailable: {exc}")
    lean, before = _look(bwrap, tmp_path / "lean"), _look(whole, tmp_path / "whole")
    assert lean["prefix"] == before["prefix"] == sys.prefix  # the same interpreter, as a venv
    assert not [name for name in lean["site"] if name.endswith(".pth")]
    assert set(lean["site"]) <= {"grpc", "google", "typing_extensions.py", "__pycache__"}
    assert lean["hooks"] == []
    assert not any(lean["importable"].values()), lean["importable"]
    # the baseline really is the whole venv: the arena's other dependencies and its .pth files
    assert [name for name in before["site"] if name.endswith(".pth")]
    assert before["importable"]["numpy"] and not before["importable"]["arena.store"]
