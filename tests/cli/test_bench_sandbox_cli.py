"""`arena bench sandbox --chain-only` as a user runs it: real bwrap launches, step by step, with the
same run's baselines, figures that add up."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import cli


def _needs_chain_bench() -> None:
    from arena.sandbox import cgroups, launch_helper
    from arena.workers.execute import bwrap_available

    if not bwrap_available():
        pytest.skip("bwrap does not run here")
    if launch_helper.path() is None or "cpu" not in cgroups.detect().kinds:
        pytest.skip("the chain's phase table needs the launch helper and a cgroup with CPU accounting")


def test_bench_sandbox_chain_steps_add_up_and_the_meter_sees_inside_the_sandbox() -> None:
    _needs_chain_bench()
    result = CliRunner().invoke(cli, ["bench", "sandbox", "--chain-only", "--chain-rounds", "1", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)["chain"]
    med = r["medians_ms"]
    assert set(r["chains"]) == {"helper", "util-linux"}
    for c in r["chains"].values():
        steps = [v for k, v in c["steps"].items() if k != "cleanup"]
        assert abs(sum(s[1] for s in steps) - c["launch"][1]) < 1e-6  # one round: the launch is its steps
        assert abs(c["vs_bwrap_alone"][1] - c["launch"][1] / med["bwrap alone"][1]) < 1e-6
        assert c["chain_ratio_met"] == (c["vs_bwrap_alone"][1] <= 2.0)
    # the rusage the referee sees misses bwrap's pid namespace; the meter's leaf does not
    assert med["bwrap alone"][1] > med["bwrap alone, unmetered"][1]


def test_bench_sandbox_chain_table_names_both_baselines_and_targets() -> None:
    _needs_chain_bench()
    result = CliRunner().invoke(cli, ["bench", "sandbox", "--chain-only", "--chain-rounds", "1"])
    assert result.exit_code == 0, result.output
    for text in ("baseline: bare fork+exec of true", "baseline: bwrap alone, the launch's arguments",
                 "launch, helper (now): total", "launch, old exec chain: total", "target <= 2x:",
                 "target <= +5 ms:", "as issue #18 counted"):  # fmt: skip
        assert text in result.output


def test_bench_sandbox_measures_a_warm_launch_against_the_same_bare_start() -> None:
    """The warm start's per-match launch (a zygote's fork, the match's own leaf and uid) is measured
    in the chain's rounds, against the same bare fork+exec, and beside a cold launch of the same bot."""
    _needs_chain_bench()
    from arena.sandbox.bwrap import warm_unavailable

    if warm_unavailable() is not None:
        pytest.skip(f"no warm start here: {warm_unavailable()}")
    result = CliRunner().invoke(cli, ["bench", "sandbox", "--chain-only", "--chain-rounds", "1", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)["chain"]
    med, warm = r["medians_ms"], r["warm"]
    assert abs(warm["overhead_vs_bare"] - (med["warm: launch"][1] - med["bare"][1])) < 1e-6
    assert warm["overhead_met"] == (warm["overhead_vs_bare"] <= 5.0)
    assert abs(warm["vs_cold"] - med["warm: launch"][1] / med["cold python: launch"][1]) < 1e-6
    table = CliRunner().invoke(cli, ["bench", "sandbox", "--chain-only", "--chain-rounds", "1"]).output
    for text in ("warm launch of a Python bot", "warm launch: vs bare", "cold launch of the same bot"):
        assert text in table
