#!/usr/bin/env python3
"""Build the solver's compiled core in place: arena/analysis/_core.c -> arena/analysis/_elfern_core.so.

Run by scripts/setup.sh (so `make setup` builds it in a fresh clone); needs only gcc (or $CC). Plain C,
no Python headers: the library is loaded with ctypes. Rebuilds only when the source is newer; `--force`
rebuilds anyway. Exit status 1 with the compiler's message when the build fails.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "arena" / "analysis" / "_core.c"
TARGET = ROOT / "arena" / "analysis" / "_elfern_core.so"
FLAGS = ["-O3", "-std=c11", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror"]


def build(force: bool = False) -> Path:
    if not force and TARGET.exists() and TARGET.stat().st_mtime >= SOURCE.stat().st_mtime:
        return TARGET
    cc = shlex.split(os.environ.get("CC", "gcc"))
    tmp = TARGET.with_suffix(".so.tmp")
    cmd = [*cc, *FLAGS, "-o", str(tmp), str(SOURCE)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building the solver core failed: {' '.join(cmd)}\n{result.stderr.strip()}")
    tmp.replace(TARGET)  # atomic: a running process never sees a half-written library
    return TARGET


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
