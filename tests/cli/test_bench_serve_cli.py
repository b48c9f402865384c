"""`arena bench serve` runs a real `arena serve`, plays matches through CreateMatch and prints the
server's RSS against the same run's baseline (a short run here; the figures are not asserted)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from arena.cli import cli

pytestmark = pytest.mark.slow


def test_bench_serve_plays_every_match_and_reports_rss() -> None:
    result = CliRunner().invoke(cli, ["bench", "serve", "--matches", "20", "--baseline", "5", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["matches"] == 20 and r["replays_written"] == 20  # every match played and recorded
    assert 0 < r["rss_before_mib"] <= r["rss_peak_mib"] and r["rss_baseline_mib"] <= r["rss_peak_mib"]
    assert set(r["samples_mib"]) >= {"5", "20"}
