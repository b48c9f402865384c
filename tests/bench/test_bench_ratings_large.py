"""`arena bench ratings`' large part (`arena.bench.ratings.run_large`) at a small size: the cold fit and
the incremental refit timed in turn with their same-run baseline (int64 passes on one thread), wall
and CPU, and the lines that show them (no time asserted)."""

from __future__ import annotations

import json
from functools import partial

import pytest
from click.testing import CliRunner

from arena.bench import ratings
from arena.cli import cli


def test_the_large_fit_is_timed_against_its_baseline_in_the_same_run() -> None:
    out = ratings.run_large(sizes=((60, 4000),), repeats=1)
    (row,) = out["sizes"]
    for key in (
        "sparse_fit",
        "sparse_fit_before",
        "incremental_refit_after_1000",
        "incremental_refit_after_1000_before",
    ):
        assert row[f"{key}_s"] > 0 and row[f"{key}_cpu_s"] >= 0, key
    assert row["sparse_fit_pair_by_pair_s"] > 0
    assert not row["incremental"]  # under 100,000 pairs: the full warm fit, the same as the warm one
    assert row["incremental_max_diff_elo"] == 0.0
    assert row["max_rating_diff_elo"] < 0.1  # the dense reference, at 60 bots
    assert out["threads"] >= 1


def test_the_bench_prints_the_large_fit_against_its_baseline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        ratings, "run_large", partial(ratings.run_large, sizes=((40, 2000), (60, 4000)), repeats=1)
    )
    args = ["bench", "ratings", "--bots", "20", "--matches", "2000", "--no-spread"]
    text = CliRunner().invoke(cli, args, catch_exceptions=False).output
    assert text.count("against its baseline, same run") == 2
    assert "at 60 bots cold ≤ 2.0 s:" in text and "incremental ≤ 0.1 s:" in text
    data = json.loads(CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False).output)
    assert [g["bots"] for g in data["large"]["sizes"]] == [40, 60]
    assert data["large"]["sizes"][1]["sparse_fit_before_cpu_s"] >= 0
