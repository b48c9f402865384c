"""`arena bench env` times every environment and the engine's playout in one run and prints each
figure against that playout."""

from __future__ import annotations

import json

from click.testing import CliRunner

from arena.cli import cli


def test_bench_env_reports_every_environment_against_the_playout() -> None:
    out = CliRunner().invoke(cli, ["bench", "env", "--seconds", "0.5", "--json"])
    assert out.exit_code == 0, out.output
    r = json.loads(out.output)
    names = {"engine_playout", "engine_cards", "pettingzoo", "gymnasium", "openspiel"}
    assert set(r["steps_per_s"]) == set(r["steps"]) == names
    assert all(r["steps"][n] > 0 and r["steps_per_s"][n] > 0 for n in names)
    assert r["vs_engine_playout"]["engine_playout"] == 1.0


def test_bench_env_refuses_a_bad_duration() -> None:
    out = CliRunner().invoke(cli, ["bench", "env", "--seconds", "0"])
    assert out.exit_code == 2 and "--seconds" in out.output
