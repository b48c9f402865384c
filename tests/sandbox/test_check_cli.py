"""`arena sandbox check`: the probe table, its JSON form and its exit code."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import cli


def test_sandbox_check_json_reports_every_area_enforced(bwrap):
    result = CliRunner().invoke(cli, ["sandbox", "check", "--json"])
    data = json.loads(result.output)
    areas = {row["area"] for row in data["checks"]}
    assert {"network", "filesystem", "pids", "memory", "CPU", "seccomp", "uid"} <= areas
    failing = [row for row in data["checks"] if row["essential"] and not row["ok"]]
    assert failing == [] and data["ok"] is True
    assert result.exit_code == 0
    # Run as root on a cgroup host: memory and pids are capped per bot by the bot's own cgroup.
    assert data["cgroup"]["version"] in ("v1", "v2", "hybrid")
    caps = {row["check"]: row["ok"] for row in data["checks"] if row["check"].endswith("_cap_per_bot")}
    assert caps == {"memory_cap_per_bot": True, "pids_cap_per_bot": True} and data["weak_limits"] == []
    by = {row["limit"]: row["by"] for row in data["enforcement"]}
    assert by["memory"] == by["pids"] == by["CPU"] == "cgroup"


def test_sandbox_check_without_cgroups_fails_unless_weak_limits_are_allowed(bwrap, tmp_path, monkeypatch):
    """A host with no cgroup hierarchy (ARENA_CGROUP_ROOT names an empty folder): every isolation
    still holds, but memory and pids are rlimit-only, so the check exits 1 unless told to accept it."""
    from arena.sandbox import cgroups

    monkeypatch.setattr(cgroups, "ROOT", tmp_path)
    cgroups.detect(refresh=True)
    try:
        strict = CliRunner().invoke(cli, ["sandbox", "check", "--json"])
        data = json.loads(strict.stdout)
        assert data["cgroup"]["version"] == "none" and data["weak_limits"] == ["memory", "pids"]
        assert {r["limit"]: r["by"] for r in data["enforcement"]}["memory"] == "rlimit"
        assert strict.exit_code == 1 and "error: memory and pids cannot be capped" in strict.stderr
        assert "--allow-weak-limits" in strict.stderr
        lenient = CliRunner().invoke(cli, ["sandbox", "check", "--json", "--allow-weak-limits"])
        data = json.loads(lenient.stdout)
        # Now only a failing essential isolation could fail it (the rlimit-only memory bomb may be
        # slow to hit 4 GiB on a loaded machine; that row is the check's own finding, not this flag's).
        assert lenient.exit_code == (0 if data["ok"] else 1)
        assert "warning: memory and pids cannot be capped" in lenient.stderr
    finally:
        monkeypatch.undo()
        cgroups.detect(refresh=True)


def test_sandbox_check_exits_non_zero_when_essential_isolation_fails(bwrap, monkeypatch):
    from arena.sandbox import check

    real = check.run_checks

    def broken(launcher=None, timeout=20.0):
        rows = real(launcher, timeout)
        rows[0].ok = False  # as if the network were reachable
        return rows

    monkeypatch.setattr(check, "run_checks", broken)
    result = CliRunner().invoke(cli, ["sandbox", "check"])
    assert result.exit_code == 1 and "NOT ENFORCED" in result.output


@pytest.mark.slow
def test_unprivileged_mode_holds_every_essential_isolation(bwrap, tmp_path):
    """The same probes run by an ordinary user: bwrap makes its own user namespace, rlimits stand in
    for the cgroups an ordinary user cannot create, and all bots share that user's uid."""
    import os
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root to start the check as an ordinary user")
    home = tmp_path / "home"
    home.mkdir()
    tmp_path.chmod(0o755)
    home.chmod(0o777)
    res = subprocess.run(
        [
            "setpriv",
            "--reuid=29999",
            "--regid=29999",
            "--clear-groups",
            sys.executable,
            "-c",
            "import sys; from arena.cli import main; sys.exit(main())",
            "sandbox",
            "check",
            "--json",
        ],
        cwd=home,
        env={"HOME": str(home), "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        timeout=120,
    )
    data = json.loads(res.stdout)
    failing = [row for row in data["checks"] if row["essential"] and not row["ok"]]
    # Every isolation holds, but an ordinary user cannot cap memory or pids per bot with a cgroup
    # here: the check says so and exits 1 (it would pass with --allow-weak-limits).
    assert failing == [] and data["ok"] is True
    assert data["weak_limits"] == ["memory", "pids"] and res.returncode == 1
    assert "--allow-weak-limits" in res.stderr
    shared = next(row for row in data["checks"] if row["check"] == "uid_per_bot")
    assert not shared["ok"] and not shared["essential"]


@pytest.mark.parametrize(
    "argv", [["season", "run", "nosuch", "--matches", "1"], ["demo", "--rule", "nosuchrule=1"]]
)
def test_weak_limits_are_named_at_the_start_of_a_run(bwrap, tmp_path, monkeypatch, argv):
    """`season run` (and `arena demo`, `arena worker`) say first when memory and pids are rlimit-only."""
    from arena.sandbox import cgroups

    monkeypatch.setenv("ARENA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(cgroups, "ROOT", tmp_path / "no-cgroups")
    cgroups.detect(refresh=True)
    try:
        if argv[0] == "demo":
            argv = [*argv, "--home", str(tmp_path / "demo")]
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code != 0  # the unknown season / rule, after the warning
        assert result.stderr.startswith("warning: cgroup none: memory and pids cannot be capped per bot")
    finally:
        monkeypatch.undo()
        cgroups.detect(refresh=True)
    assert cgroups.weak_limits_warning() is None  # this host (root, cgroups) caps both per bot
