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


def test_the_feed_has_every_trick_once_in_order_inside_its_deal(repo_root) -> None:
    """Each trick's public part is sent off the per-move path (once the next TurnRequest is out), yet
    every trick of the record comes once, in order, after its deal's start and before its end."""
    bundle = load_bundle(repo_root / "sample_bots" / "python" / "random")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launcher = LocalLauncher(warn=False)
    events: list[dict] = []
    outcome = play_match((bundle, bundle), rules=Rules(max_deals=3), seed=9, time_control=TimeControl(startup=20.0),
                         launcher=launcher, match_id="feed-1", on_event=events.append)  # fmt: skip
    assert outcome.verdicts == ("OK", "OK")
    kinds = [(e["event"], e.get("deal")) for e in events if e["event"] != "trick"]
    assert kinds[1:] == [x for d in (1, 2, 3) for x in (("deal_start", d), ("deal_end", d))] + [
        ("match_end", None)
    ]
    fed, recorded = [], []
    deal = 0  # the deal open now (0: none)
    for e in events:
        if e["event"] == "deal_start":
            deal = e["deal"]
        elif e["event"] == "deal_end":
            deal = 0
        elif e["event"] == "trick":
            assert e["deal"] == deal  # inside its own deal: after its start, before its end
            fed.append((e["deal"], e["trick"], e["leader"], tuple(e["cards"]), e["winner"]))
    for d, record in enumerate(outcome.record.deals, 1):
        plays = list(record.plays)
        for t in range(len(plays) // 2):
            lead, follow = plays[2 * t], plays[2 * t + 1]
            recorded.append((d, t + 1, lead.seat, (lead.card, follow.card)))
    assert len(recorded) == 3 * 16
    assert [f[:4] for f in fed] == recorded
