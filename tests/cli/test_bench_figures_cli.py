"""`arena bench coverage` and `arena bench compare` as a user runs them, at a small scale: figures
that agree with each other, and refusals of settings that cannot be simulated."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_bench_compare_measures_alpha_beta_and_power_at_the_users_settings() -> None:
    args = ["bench", "compare", "--elo0", "0", "--elo1", "150", "--runs", "30", "--seed", "4", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["elo0"] == 0 and r["elo1"] == 150 and r["draws"] == 0.0  # flags=1: no draw possible
    at0, at1 = r["at_elo0"], r["at_elo1"]
    assert (
        at0["h1"] + at0["h0"] + at0["inconclusive"] == 1.0
        and at1["h1"] + at1["h0"] + at1["inconclusive"] == 1
    )
    assert r["alpha_measured"] == at0["h1"] <= 0.2 and r["power_measured"] == at1["h1"] >= 0.8
    assert r["beta_measured"] == at1["h0"] and 0 < at1["median_pairs"] <= at1["p90_pairs"] <= r["max_pairs"]
    assert r["wald_expected_pairs"]["midpoint"] >= r["wald_expected_pairs"]["elo1"] > 0
    text = CliRunner().invoke(cli, args[:-1]).output
    assert "α  H1 accepted at elo0" in text and "power  H1 accepted at elo1" in text
    assert "Wald's expected" in text


def test_bench_compare_refuses_what_it_cannot_simulate() -> None:
    cases = (
        (["--elo0", "30", "--elo1", "10"], "must be above --elo0"),
        (["--draws", "0.2"], "a match to flags cannot be drawn"),
        (["--elo1", "900", "--deck-luck", "0.9"], "cannot be reached with --deck-luck"),
        (["--format", "flags=0"], "--format 'flags=0'"),
    )
    for extra, words in cases:
        result = CliRunner().invoke(cli, ["bench", "compare", "--runs", "10", *extra])
        assert result.exit_code == 2, (extra, result.output)
        assert words in result.output and "Traceback" not in result.output, (extra, result.output)


def test_bench_coverage_prints_the_extremes_against_the_normal_interval() -> None:
    result = CliRunner().invoke(cli, ["bench", "coverage", "--seasons", "2", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert len(r["ladders"]) == 6
    for row in r["ladders"]:
        assert row["extreme_cases"] > 0 and row["cases"] >= row["extreme_cases"]
        # the widening only ever adds: the shown interval covers at least what the normal one did
        assert row["widened_ext"] >= row["normal_ext"] and row["widened_all"] >= row["normal_all"]
    text = CliRunner().invoke(cli, ["bench", "coverage", "--seasons", "1"]).output
    assert "extremes as shown (normal" in text and "target: 0.93-0.97 at the extremes" in text
