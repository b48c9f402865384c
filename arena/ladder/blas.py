"""A steady BLAS: small fits run on one OpenBLAS thread.

OpenBLAS's worker threads spin while they wait; on a loaded machine a small solve then sometimes
takes 100 times longer (0.9 s instead of 10 ms in 3 of 8 runs), waiting for a thread that has no
core. For matrices below `SMALL` one thread is faster and steady. The thread count is set through
the OpenBLAS library numpy already loaded (found in /proc/self/maps); without one this is a no-op.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
from collections.abc import Callable, Iterator

import numpy as np

SMALL = 4000  # players: below this a fit runs on one BLAS thread (measured: 2,000 bots 2.5–3.3 s on one, 5–10 s on two, loaded 2 cores)


@functools.cache
def _openblas() -> tuple[Callable[[int], object], Callable[[], int], str] | None:
    """(set_num_threads, get_num_threads, library path) of the OpenBLAS numpy loaded, or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and "/" in line}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix in ("scipy_openblas_", "openblas_", ""):
            for suffix in ("64_", "_64_", ""):
                try:
                    setter = getattr(lib, f"{prefix}set_num_threads{suffix}")
                    getter = getattr(lib, f"{prefix}get_num_threads{suffix}")
                except AttributeError:
                    continue
                setter.argtypes, getter.restype = [ctypes.c_int], ctypes.c_int
                return setter, getter, path
    return None


def blas_threads_now() -> int | None:
    """The BLAS thread count in force (None: not an OpenBLAS we can see)."""
    found = _openblas()
    return None if found is None else int(found[1]())


@contextlib.contextmanager
def blas_threads(n: int) -> Iterator[None]:
    """Run the block with `n` BLAS threads, then restore the previous count."""
    found = _openblas()
    if found is None:
        yield
        return
    setter, getter, _ = found
    before = int(getter())
    setter(n)
    try:
        yield
    finally:
        setter(before)


def for_size(players: int) -> contextlib.AbstractContextManager:
    """One thread for a small fit; the library's default for a large one."""
    return blas_threads(1) if players < SMALL else contextlib.nullcontext()


@functools.cache
def _lapack(name: str):  # noqa: ANN202 - a ctypes function or None
    """LAPACK routine `name` (e.g. "dpotrf") of the loaded OpenBLAS (64-bit integers), or None."""
    found = _openblas()
    if found is None:
        return None
    lib = ctypes.CDLL(found[2])
    for symbol in (f"scipy_{name}_64_", f"{name}_64_"):
        fn = getattr(lib, symbol, None)
        if fn is not None:
            return fn
    return None


def definite_inverse(matrix: np.ndarray, *, overwrite: bool = False) -> np.ndarray | None:
    """The inverse of a symmetric matrix, computed through its Cholesky factor (LAPACK potrf + potri:
    half the work of a general inverse). None if the matrix is not positive definite. Without a
    reachable LAPACK it falls back on numpy's Cholesky check and general inverse. `overwrite` lets
    it use the matrix's memory."""
    potrf, potri = _lapack("dpotrf"), _lapack("dpotri")
    n = len(matrix)
    if potrf is None or potri is None or n == 0:
        try:
            np.linalg.cholesky(matrix)
            inverse = np.linalg.inv(matrix)
        except np.linalg.LinAlgError:
            return None
        return 0.5 * (inverse + inverse.T)
    if overwrite and matrix.dtype == np.float64 and matrix.flags.c_contiguous:
        a = matrix.T  # symmetric: its transpose is the same matrix, laid out as LAPACK wants
    else:
        a = np.array(matrix, dtype=np.float64, order="F", copy=True)
    size, info = ctypes.c_int64(n), ctypes.c_int64(0)
    uplo = ctypes.c_char(b"L")
    ptr = a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    potrf(
        ctypes.byref(uplo),
        ctypes.byref(size),
        ptr,
        ctypes.byref(size),
        ctypes.byref(info),
        ctypes.c_size_t(1),
    )
    if info.value != 0:
        return None  # > 0: a leading minor is not positive definite
    potri(
        ctypes.byref(uplo),
        ctypes.byref(size),
        ptr,
        ctypes.byref(size),
        ctypes.byref(info),
        ctypes.c_size_t(1),
    )
    if info.value != 0:
        return None
    return mirror_upper(a.T)


def tiles(n: int, block: int = 256) -> Iterator[tuple[int, int]]:
    """(start, stop) of each run of `block` rows of an n-row matrix: passes over a large matrix a
    tile at a time stay in cache (a whole transposed pass strides through memory: 7x slower for
    2,000 players)."""
    for start in range(0, n, block):
        yield start, min(n, start + block)


def mirror_upper(m: np.ndarray) -> np.ndarray:
    """Copy the upper triangle of square `m` onto its lower one, in place."""
    for r0, r1 in tiles(len(m)):
        m[r0:r1, :r0] = m[:r0, r0:r1].T
        corner = m[r0:r1, r0:r1]
        upper = np.triu(corner)
        upper += np.triu(corner, 1).T
        corner[...] = upper
    return m


def add_transpose(m: np.ndarray) -> np.ndarray:
    """m += m.T for square `m`, in place."""
    for r0, r1 in tiles(len(m)):
        m[r0:r1, r1:] += m[r1:, r0:r1].T
        m[r1:, r0:r1] = m[r0:r1, r1:].T
        corner = m[r0:r1, r0:r1]
        corner += corner.T.copy()
    return m
