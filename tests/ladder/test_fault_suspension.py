"""Every fault verdict counts toward suspension, and a suspension reason holds only arena-written text.

A season (both databases) with one bot per fault `Verdict`, each forfeiting with that verdict and a
verdict detail that quotes a planted marker (as a real referee's detail may quote a bot's stderr).
Played through the real season runner, recorder and worker pool; matches by `engine_play`.
"""

from __future__ import annotations

import engine_play
from sqlalchemy import select

from arena.ladder.runner import SeasonRun
from arena.ladder.seasons import create_season, start_season
from arena.store import Store
from arena.store.models import Match
from arena.verdicts import Verdict
from arena.workers.pool import run_pool
from arena.workers.submit import submit_bundle

MARKER = "api_key=PLANTED-7f3c"


def test_every_fault_verdict_suspends_with_a_reason_free_of_bot_text(store: Store, tmp_path) -> None:
    faults = [v for v in Verdict if v.fault]
    assert {Verdict.CPU_LIMIT, Verdict.PIDS_LIMIT, Verdict.BUILD_FAILED, Verdict.STARTUP_FAILED} <= set(
        faults
    )
    bots = {f"bad-{v.lower().replace('_', '-')}": v for v in faults}
    for i, (name, verdict) in enumerate(bots.items()):
        bundle = engine_play.make_bundle(tmp_path / "src", name, str(verdict), detail=f"stderr: {MARKER}")
        submit_bundle(store, bundle, name=name, owner=f"owner{i}")
    for name, owner in (("good1", "ann"), ("good2", "bob")):
        submit_bundle(
            store, engine_play.make_bundle(tmp_path / "src", name, "random"), name=name, owner=owner
        )
    create_season(store, "faults", rules=["flags=1"], duplicate=True)
    start_season(store, "faults")
    source = SeasonRun(store, "faults", launcher="local", matches=80)
    run_pool(source, engine_play.play, concurrency=2, threads=True)

    with store.tx() as s:
        details = [
            d for m in s.scalars(select(Match).where(Match.status == "done")) for d in m.verdict_details
        ]
    assert any(MARKER in d for d in details)  # the plant reached the store: the checks below can fail
    assert set(source.suspended) == set(bots)
    for name, verdict in bots.items():
        bot = store.bot(name)
        assert bot.suspended, name
        reason = bot.suspension_reason
        assert reason.startswith(f"{name}@1 suspended: ") and f"{verdict} ×" in reason, reason
        assert "last: " in reason and " in match " in reason and reason.endswith("to play again.")
        assert MARKER not in reason and "stderr" not in reason and "in test" not in reason
        for notice in store.notices(name):
            assert MARKER not in notice.message
    assert not store.bot("good1").suspended and not store.bot("good2").suspended
