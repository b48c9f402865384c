"""Play one queued match for real: load the stored bundles, pick the launcher, call the referee's
`play_match`, and turn its outcome into the plain `MatchResult` the store records.

Runs inside a pool child process (spawned: gRPC does not survive fork).
"""

from __future__ import annotations

import time
from typing import Any

from arena.store.jobs import MatchJob, MatchResult

LAUNCHERS = ("bwrap", "local")


def make_launcher(name: str) -> Any:
    """The sandbox launcher called `name` (bwrap: the real sandbox; local: unsafe, development only)."""
    if name == "local":
        from arena.sandbox.local import LocalLauncher

        return LocalLauncher(warn=False)
    if name == "bwrap":
        from arena.sandbox import bwrap  # added by the sandbox work; ImportError until then

        return bwrap.BwrapLauncher()
    raise ValueError(f"unknown launcher {name!r}; use one of {', '.join(LAUNCHERS)}")


def bwrap_available() -> bool:
    """True when the bwrap launcher exists and can run here."""
    import shutil

    try:
        from arena.sandbox import bwrap  # noqa: F401
    except ImportError:
        return False
    return shutil.which("bwrap") is not None


def run_job(job: MatchJob) -> MatchResult:
    """Play the match; bot misbehaviour comes back as verdicts, never as an exception."""
    from arena.engine import Rules
    from arena.referee import TimeControl
    from arena.sandbox.bundle import load_bundle
    from arena.workers.match import play_match

    started = time.monotonic()
    bundles = (load_bundle(job.bundles[0]), load_bundle(job.bundles[1]))
    outcome = play_match(
        bundles, rules=Rules.from_pairs(job.rules), seed=job.seed, time_control=TimeControl(**job.time_control),
        launcher=make_launcher(job.launcher), match_id=f"m{job.match_id}",
    )
    return MatchResult(
        winner=outcome.winner, void=outcome.void, verdicts=outcome.verdicts,
        verdict_details=outcome.verdict_details, lines=outcome.lines, deals_played=outcome.deals_played,
        replay=outcome.replay_bytes, duration=time.monotonic() - started,
    )
