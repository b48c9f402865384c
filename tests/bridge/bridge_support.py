"""Helpers for the stdio bridge tests (a uniquely named module: conftest names collide across
test folders)."""

from __future__ import annotations

import os
from pathlib import Path

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
