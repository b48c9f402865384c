"""The cgroup v2 lane (`make test-cgroup2`) as part of `make test`: boots Debian's kernel with
cgroup_no_v1=all under QEMU and runs the v2 sandbox tests, hostile bots and a short season inside
it (scripts/test-cgroup2.sh, scripts/cgroup2-guest.sh). Skip it locally with `-m "not cgroup2_vm"`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.cgroup2_vm]


@pytest.mark.timeout(1200)
def test_the_sandbox_holds_on_a_pure_cgroup_v2_kernel(repo_root):
    if not os.path.exists("/dev/kvm"):
        pytest.skip("/dev/kvm is absent: no VM can boot here, so the cgroup v2 lane cannot run")
    # Under TCG (no vmx/svm: docs/sandbox.md, "KVM or TCG") `make test` runs the smoke set, which
    # proves every v2 path; `make test-cgroup2` adds the hostile bots, the check and a season.
    hw = any(flag in open("/proc/cpuinfo").read().split() for flag in ("vmx", "svm"))
    lane = os.environ.get("ARENA_CGROUP2_LANE") or ("full" if hw else "smoke")
    res = subprocess.run(
        ["bash", str(repo_root / "scripts" / "test-cgroup2.sh")],
        cwd=repo_root,
        env={**os.environ, "ARENA_PYTHON": sys.executable, "ARENA_CGROUP2_LANE": lane},
        capture_output=True,
        text=True,
        timeout=1150,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    assert "lane: status 0" in out and "cgroup2 controllers:" in out, out[-6000:]
    assert "network devices: lo" in out  # the VM had no network device
    if lane != "full":  # (the full lane runs all of tests/sandbox) the warm start's cases ran, none skipped
        assert "== the warm start on cgroup v2" in out and "the warm start's tests were skipped" not in out
