"""The season fit's passes over the pair list: compiled (`_fit.c`, loaded with ctypes) or NumPy.

Each pass visits every pair that met: 9M of them at 10,000 bots / 10M results, where NumPy's
gathers, exp, products and scatter sums make eight to ten sweeps of the pairs for what one C loop
does in one (measured: 5x faster for the information, 3x for a Laplacian product). The library is
built in place from its source on first use (gcc, or $CC; like `arena.sandbox.launch_helper`), and
rebuilt when older than it or lacking one of its passes (a copied library of an older source); where that fails, or with ARENA_FIT_KERNEL=0, the NumPy passes run
instead and the figures agree to rounding (tests/ladder/test_fit_kernel.py). ARENA_FIT_KERNEL=runs runs
the compiled passes on int64 u and v instead of compressed rows (`by_rows`), ARENA_FIT_KERNEL=pairs as
they were before they summed over runs of equal u (`by_runs`): the bench's same-run baselines.
The passes on compressed rows and the gradient's are cut among `threads()` threads (pthreads).
"""

from __future__ import annotations

import ctypes
import logging
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_fit.c"
TARGET = HERE / "_arena_fit.so"
FLAGS = ["-O3", "-std=c11", "-fPIC", "-shared", "-pthread", "-Wall", "-Wextra", "-Werror"]

_lib: ctypes.CDLL | None = None
_tried = False


def build(force: bool = False) -> Path:
    """Compile the kernel in place unless it is up to date; RuntimeError with the compiler's message."""
    if not force and TARGET.exists() and TARGET.stat().st_mtime >= SOURCE.stat().st_mtime:
        return TARGET
    cc = shlex.split(os.environ.get("CC", "gcc"))
    tmp = TARGET.with_name(f".{TARGET.name}.{os.getpid()}.tmp")
    cmd = [*cc, *FLAGS, "-o", str(tmp), str(SOURCE), "-lm"]
    try:
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"building the fit kernel failed: {exc}") from None
    if result.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise RuntimeError(f"building the fit kernel failed: {' '.join(cmd)}\n{result.stderr.strip()}")
    tmp.replace(TARGET)  # atomic: another process never loads a half-written library
    return TARGET


def library() -> ctypes.CDLL | None:
    """The compiled kernel, built if needed; None (NumPy) when it cannot be, or ARENA_FIT_KERNEL=0."""
    global _lib, _tried
    if os.environ.get("ARENA_FIT_KERNEL", "1") == "0":
        return None
    if _tried:
        return _lib
    _tried = True
    try:
        lib = _typed(ctypes.CDLL(str(build())))
        if lib is None:  # a library of an older source (copied, or its mtime newer): build it again
            lib = _typed(_fresh(build(force=True)))
        if lib is None:
            raise RuntimeError(f"{TARGET} lacks the passes {SOURCE.name} defines")
    except (RuntimeError, OSError) as exc:
        log.warning("the season fit's compiled kernel is not available (%s); using NumPy", exc)
        return None
    _lib = lib
    return lib


def _fresh(path: Path) -> ctypes.CDLL:
    """Load `path` anew: dlopen hands back the library already loaded from the same name, so a copy
    under a name of its own is loaded (and unlinked: its mapping stays)."""
    copy = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.so")
    shutil.copyfile(path, copy)
    try:
        return ctypes.CDLL(str(copy))
    finally:
        copy.unlink(missing_ok=True)


PASSES = (
    "fit_information",
    "fit_information_runs",
    "fit_offdiagonal",
    "fit_offdiagonal_pairs",
    "fit_coarse",
    "fit_weights",
    "fit_gradient",
    "fit_information_csr",
    "fit_offdiagonal_csr",
    "fit_gradient_csr",
    "fit_csr",
    "fit_weights_csr",
    "fit_coarse_csr",
    "fit_gradient_threads",
    "fit_components",
)


def _typed(lib: ctypes.CDLL) -> ctypes.CDLL | None:
    """`lib` with its passes' argument types declared; None when it lacks one of PASSES."""
    if not all(hasattr(lib, name) for name in PASSES):
        return None
    f64 = np.ctypeslib.ndpointer(dtype=np.float64, flags="C_CONTIGUOUS")
    i64 = np.ctypeslib.ndpointer(dtype=np.int64, flags="C_CONTIGUOUS")
    n = ctypes.c_int64
    lib.fit_information.argtypes = [n, i64, i64, f64, f64, f64, f64, f64]
    lib.fit_information_runs.argtypes = [n, i64, i64, f64, f64, f64, f64, f64]
    lib.fit_offdiagonal.argtypes = [n, i64, i64, f64, f64, f64]
    lib.fit_offdiagonal_pairs.argtypes = [n, i64, i64, f64, f64, f64]
    lib.fit_coarse.argtypes = [n, i64, i64, f64, i64, n, n, f64, f64]
    lib.fit_weights.argtypes = [n, i64, i64, f64, f64, n, f64, f64, i64]
    lib.fit_gradient.argtypes = [n, i64, i64, f64, f64, f64, f64, f64, f64]
    i32 = np.ctypeslib.ndpointer(dtype=np.int32, flags="C_CONTIGUOUS")
    lib.fit_information_csr.argtypes = [n, i64, i32, f64, f64, f64, f64, f64, n]
    lib.fit_offdiagonal_csr.argtypes = [n, i64, i32, f64, f64, f64, n]
    lib.fit_gradient_csr.argtypes = [n, i64, i32, f64, f64, f64, f64, f64, f64, n]
    lib.fit_components.argtypes = [n, i64, i64, n, n, i64]
    lib.fit_gradient_threads.argtypes = [n, i64, i64, f64, f64, f64, f64, f64, f64, n, n]
    lib.fit_csr.argtypes = [n, i64, i64, n, i64, i32]
    lib.fit_weights_csr.argtypes = [n, i64, i32, f64, f64, n, f64, f64, i64]
    lib.fit_coarse_csr.argtypes = [n, i64, i32, f64, i64, n, f64, f64]
    for name in PASSES:
        getattr(lib, name).restype = None
    lib.fit_csr.restype = ctypes.c_int64
    return lib


def by_runs() -> bool:
    """Whether the compiled passes sum over runs of equal u with one exp a player (the default), or
    pair by pair with an exp a pair as they did before (ARENA_FIT_KERNEL=pairs: a baseline of
    `arena bench ratings`); the same fit to rounding either way."""
    return os.environ.get("ARENA_FIT_KERNEL", "1") != "pairs"


def by_rows() -> bool:
    """Whether the compiled passes read a sorted pair list as compressed rows (int32 v, each player's
    first pair; the default), or its int64 u and v as the passes by runs did before (ARENA_FIT_KERNEL=runs,
    or pairs: the baselines of `arena bench ratings`); the same figures to the last bit either way."""
    return os.environ.get("ARENA_FIT_KERNEL", "1") not in ("pairs", "runs")


THREADS_MAX = 8


def threads() -> int:
    """Threads for a pass over the pairs: ARENA_FIT_THREADS, else the CPUs this process may run on
    (at most THREADS_MAX). A pass is cut into parts of at least 65,536 pairs (`_fit.c`), so a small
    fit runs on one; 1 gives the passes on the caller's thread alone (the bench's baseline)."""
    raw = os.environ.get("ARENA_FIT_THREADS", "")
    if raw.strip().isdigit() and int(raw) >= 1:
        return min(int(raw), THREADS_MAX)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, THREADS_MAX))


def _c(a: np.ndarray, dtype: type) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)
