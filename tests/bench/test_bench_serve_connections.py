"""`arena bench serve --connections N` at a small scale: a real `arena serve` takes the idle
connections (its idle time longer than the bench waits before it reads the RSS) and closes every one
of them; no time is asserted."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_connections_bench_sees_every_idle_connection_closed() -> None:
    result = CliRunner().invoke(cli, ["bench", "serve", "--connections", "40", "--idle", "4", "--json"])
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    assert r["kept"] == 40 and r["left_open"] == 0 and r["met"]
    assert r["rss_open_mib"] > 0 and r["rss_idle_mib"] > 0
