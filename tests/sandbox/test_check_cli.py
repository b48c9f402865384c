"""`arena sandbox check`: the probe table, its JSON form and its exit code."""

from __future__ import annotations

import json

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
