"""Fixtures for the stdio bridge: bundles whose run line starts the bridge in front of a tiny bot,
played through the real referee with the local launcher (the sandboxed path is in
tests/sample_bots/test_languages.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from bridge_support import REPO

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import MatchOutcome, play_match


@pytest.fixture
def play():
    """play(bundle_a, bundle_b, deals) -> MatchOutcome, through the real referee."""

    def _play(a: Path, b: Path, deals: int = 2, seed: int = 3) -> MatchOutcome:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            launcher = LocalLauncher(warn=False)
        return play_match(
            (load_bundle(a), load_bundle(b)), rules=Rules(max_deals=deals), seed=seed,
            time_control=TimeControl(), launcher=launcher, match_id=f"bridge-test-{seed}",
        )  # fmt: skip

    return _play


@pytest.fixture
def random_bot() -> Path:
    return REPO / "sample_bots" / "python" / "random"
