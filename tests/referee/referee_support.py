"""Helpers the referee tests import by name (a conftest is not a module to import from: under
pytest's prepend import mode every folder's conftest is `conftest`, and the last one loaded wins)."""

from __future__ import annotations

import warnings
from pathlib import Path

from arena.engine import Rules
from arena.referee import TimeControl
from arena.sandbox.bundle import load_bundle
from arena.sandbox.local import LocalLauncher
from arena.workers.match import play_match

BOTS = Path(__file__).resolve().parent / "bots"
REPO = Path(__file__).resolve().parents[2]
# Short clocks keep the suite fast; generous enough for a loaded 2-core machine.
FAST = TimeControl(
    startup=20.0, move=1.0, bank=3.0
)  # roomy: normal bots must never run out on a loaded machine


def bundle(name: str):
    path = BOTS / name if (BOTS / name).is_dir() else REPO / "sample_bots" / "python" / name
    return load_bundle(path)


def local_launcher() -> LocalLauncher:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LocalLauncher(warn=False)


def play(a: str, b: str, *, seed: int = 1, tc: TimeControl = FAST, rules: Rules | None = None, **kw):
    return play_match(
        (bundle(a), bundle(b)),
        rules=rules or Rules(),
        seed=seed,
        time_control=tc,
        launcher=local_launcher(),
        **kw,
    )
