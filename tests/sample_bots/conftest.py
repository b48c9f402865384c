"""The sample bots' strategy modules live in their bundle folders (a bundle imports its siblings),
so the tests put those folders on sys.path. Their module names are unique across the bundles."""

from __future__ import annotations

import sys
from pathlib import Path

BOTS = Path(__file__).resolve().parents[2] / "sample_bots" / "python"
for bundle in ("tactician", "greedy", "pimc", "ismcts"):
    path = str(BOTS / bundle)
    if path not in sys.path:
        sys.path.insert(0, path)
