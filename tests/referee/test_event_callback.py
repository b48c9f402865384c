"""A display callback that raises never breaks a match, and is logged once, not once per event."""

from __future__ import annotations

import logging
import warnings

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match


def test_a_failing_event_callback_is_logged_once_and_the_match_plays_on(repo_root, caplog) -> None:
    bundle = load_bundle(repo_root / "sample_bots" / "python" / "random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher(warn=False)
    calls = []

    def broken(event: dict) -> None:
        calls.append(event["event"])
        raise RuntimeError("the display broke")

    with caplog.at_level(logging.ERROR, logger="arena.referee.streams"):
        outcome = play_match((bundle, bundle), rules=Rules(), seed=9, time_control=TimeControl(startup=20.0),
                             launcher=launcher, match_id="cb-1", on_event=broken)  # fmt: skip
    assert outcome.verdicts == ("OK", "OK") and len(calls) > 10
    failed = [r for r in caplog.records if "event callback failed" in r.getMessage()]
    assert len(failed) == 1 and failed[0].exc_info is not None
