#!/usr/bin/env python3
"""Build the solver's compiled core in place: arena/analysis/_core.c -> arena/analysis/_elfern_core.so.

Run by scripts/setup.sh (so `make setup` builds it in a fresh clone); needs only gcc (or $CC). Plain C,
no Python headers: the library is loaded with ctypes. Rebuilds only when the source is newer; `--force`
rebuilds anyway. Exit status 1 with the compiler's message when the build fails.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "arena" / "analysis" / "_core.c"
TARGET = ROOT / "arena" / "analysis" / "_elfern_core.so"
FLAGS = ["-O3", "-std=c11", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror"]
# x86 instructions worth 2x to the playouts (select the k-th card with pdep, count with popcnt). Used only
# when the building machine has them: the library is built where it runs (setup.sh, in place). Set
# ELFERN_CORE_PORTABLE=1 to build without them (an image built here for older CPUs).
X86_FLAGS = {"popcnt": "-mpopcnt", "bmi1": "-mbmi", "bmi2": "-mbmi2"}


def cpu_flags() -> list[str]:
    if os.environ.get("ELFERN_CORE_PORTABLE") or platform.machine() not in ("x86_64", "AMD64"):
        return []
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    have = set()
    for line in info.splitlines():
        if line.startswith("flags"):
            have = set(line.split(":", 1)[1].split())
            break
    return list(X86_FLAGS.values()) if set(X86_FLAGS) <= have else []


def build(force: bool = False) -> Path:
    if not force and TARGET.exists() and TARGET.stat().st_mtime >= SOURCE.stat().st_mtime:
        return TARGET
    cc = shlex.split(os.environ.get("CC", "gcc"))
    tmp = TARGET.with_suffix(".so.tmp")
    cmd = [*cc, *FLAGS, *cpu_flags(), "-o", str(tmp), str(SOURCE)]
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
