"""Fixtures for the stdio bridge: bundles whose run line starts the bridge in front of a tiny bot,
played through the real referee with the local launcher (the sandboxed path is in
tests/sample_bots/test_languages.py)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import MatchOutcome, play_match

REPO = Path(__file__).resolve().parents[2]


def bridged_bundle(root: Path, script: str, name: str = "bridged") -> Path:
    """A bundle running `python3 -m arena.sdk.stdio_bridge -- python3 bot.py` (the bot: `script`)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bot.py").write_text(script)
    (root / "bot.toml").write_text(
        f'name = "{name}"\nversion = "7"\nlanguage = "python"\n'
        'run = ["python3", "-m", "arena.sdk.stdio_bridge", "--", "python3", "bot.py"]\n'
    )
    os.chmod(root, 0o755)
    return root


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
