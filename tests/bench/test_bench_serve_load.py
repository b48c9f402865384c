"""`arena bench serve --load` at a small scale: a real `arena serve` playing a ladder season in the
sandbox, then spectators, owners and one hostile owner at once. It must complete with no error for
anyone (the hostile owner's refusals are proper statuses, not errors); no time is asserted."""

from __future__ import annotations

import json
import ssl

import pytest
from click.testing import CliRunner

from arena.cli import cli

pytestmark = pytest.mark.slow


def test_load_bench_completes_with_no_errors_and_the_ladder_playing(monkeypatch) -> None:
    made: list[int] = []  # TLS contexts the callers built: each loads the CA bundle on their one loop
    real = ssl.create_default_context
    monkeypatch.setattr(ssl, "create_default_context", lambda *a, **k: made.append(1) or real(*a, **k))
    result = CliRunner().invoke(
        cli, ["bench", "serve", "--load", "--seconds", "6", "--spectators", "4", "--owners", "2", "--json"]
    )
    assert result.exit_code == 0, result.output
    r = json.loads(result.output)
    failing = {name: c["error_examples"] for name, c in r["calls"].items() if c["error"]}
    assert r["errors"] == 0, failing
    assert r["server_alive"]
    assert r["ladder_matches"]["unloaded"] > 0 and r["ladder_matches"]["loaded"] > 0  # the ladder played on
    roles = {name.split()[0] for name in r["calls"]}
    assert roles == {"spectator", "owner", "hostile"}  # every kind of caller was heard
    hostile = [c for name, c in r["calls"].items() if name.startswith("hostile")]
    assert sum(c["refused"] for c in hostile) > 0  # it pushed past a limit and was told so
    assert r["rss_load_end_mib"] > 0 and r["public_reads_p99_ms"] is not None
    assert len(made) <= 1  # one, shared: built per client, they held the callers' loop for over a second
