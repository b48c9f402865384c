#!/usr/bin/env python3
"""Build the solver's compiled core in place (arena/analysis/build.py): _core.c -> _elfern_core.so.

Run by scripts/setup.sh, so `make setup` builds it in a fresh clone. Rebuilds only when the source is
newer; `--force` rebuilds anyway. Exit status 1 with the compiler's message when the build fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's arena, installed or not

from arena.analysis.build import build  # noqa: E402


def main() -> int:
    try:
        path = build(force="--force" in sys.argv[1:])
    except (RuntimeError, OSError) as exc:
        print(f"build_core: {exc}", file=sys.stderr)
        return 1
    print(f"build_core: {path.relative_to(ROOT)} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
