"""A bot whose program cannot even be started loses with a named verdict that says why; the
opponent wins and nothing hangs."""

from __future__ import annotations

import warnings
from pathlib import Path

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match

REPO = Path(__file__).resolve().parents[2]


def test_unstartable_bot_loses_with_startup_failed(tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "bot.toml").write_text(
        'name = "broken"\nlanguage = "none"\nrun = ["/nonexistent/elfern-bot"]\n'
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher()
    outcome = play_match(
        (load_bundle(broken), load_bundle(REPO / "sample_bots/python/random")),
        rules=Rules(max_deals=1), seed=3, time_control=TimeControl(startup=20), launcher=launcher,
    )  # fmt: skip
    assert outcome.verdicts[0] in ("STARTUP_FAILED", "CRASH"), outcome.verdicts
    assert outcome.verdicts[1] == "OK"
    assert outcome.winner == 1 and not outcome.void
    # the bundle's own run line is the author's text: in the private detail, not the public sentence
    assert "/nonexistent/elfern-bot" in outcome.record.result.private_details[0]
    assert "/nonexistent/elfern-bot" not in outcome.verdict_details[0]
