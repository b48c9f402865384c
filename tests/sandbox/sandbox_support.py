"""Helpers for the sandbox tests."""

from __future__ import annotations

import os
from pathlib import Path


def make_bundle(root: Path, code: str, toml_extra: str = "", name: str = "t") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "bot.py").write_text(code)
    (root / "bot.toml").write_text(
        f'name = "{name}"\nlanguage = "python"\nrun = ["python3", "bot.py"]\n{toml_extra}'
    )
    os.chmod(root, 0o755)
    return root
