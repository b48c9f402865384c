"""Building the compiled core in place: arena/analysis/_core.c -> arena/analysis/_elfern_core.so.

`scripts/build_core.py` (run by scripts/setup.sh, so `make setup` builds it in a fresh clone) calls
`build`; tests call `ensure_built`. Needs only gcc (or $CC): plain C, no Python headers, loaded with
ctypes. Rebuilds only when the source is newer than the library.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_core.c"
SOURCES = (SOURCE, HERE / "_playout.c", HERE / "_ismcts.c")  # _core.c includes the other two
TARGET = HERE / "_elfern_core.so"
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
    if not force and TARGET.exists() and all(TARGET.stat().st_mtime >= f.stat().st_mtime for f in SOURCES):
        return TARGET
    cc = shlex.split(os.environ.get("CC", "gcc"))
    tmp = TARGET.with_suffix(".so.tmp")
    cmd = [*cc, *FLAGS, *cpu_flags(), "-o", str(tmp), str(SOURCE), "-lm"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building the solver core failed: {' '.join(cmd)}\n{result.stderr.strip()}")
    tmp.replace(TARGET)  # atomic: a running process never sees a half-written library
    return TARGET


def ensure_built() -> None:
    """Build the core if it is missing or stale, and make `arena.analysis.core` load it."""
    from arena.analysis import core

    build()
    if not core.available():
        core._tried = False
    if not core.available():
        raise RuntimeError(f"{TARGET} was built but does not load")
