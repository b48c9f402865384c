"""Which search runs: the compiled core (`_core.c`, loaded with ctypes) or the pure-Python one.

The compiled core is built by `scripts/build_core.py` (run by `scripts/setup.sh`, so `make setup`
builds it); when it is missing or older than its source, "auto" falls back to pure Python and logs it
once. Both cores answer the same questions with the same answers.
"""

from __future__ import annotations

import ctypes
import logging
from pathlib import Path

from arena.analysis import pysolve

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "_core.c"
SOURCES = (SOURCE, HERE / "_playout.c", HERE / "_ismcts.c")  # _core.c includes the other two
LIBRARY = HERE / "_elfern_core.so"
CORES = ("auto", "c", "python")


class CoreUnavailable(RuntimeError):
    """The compiled core was asked for but is not built; the message says how to build it."""


_lib: ctypes.CDLL | None = None
_tried = False


def _load() -> ctypes.CDLL | None:
    global _lib, _tried
    if _tried:
        return _lib
    _tried = True
    if not LIBRARY.exists():
        log.info("compiled solver core not built (%s); using pure Python", LIBRARY.name)
        return None
    stale = [f.name for f in SOURCES if f.exists() and f.stat().st_mtime > LIBRARY.stat().st_mtime]
    if stale:
        log.warning("compiled solver core is older than %s; using pure Python", ", ".join(stale))
        return None
    try:
        lib = ctypes.CDLL(str(LIBRARY))
    except OSError as exc:
        log.warning("compiled solver core cannot be loaded (%s); using pure Python", exc)
        return None
    u32, i32 = ctypes.c_uint32, ctypes.c_int
    out = ctypes.POINTER(ctypes.c_int8)
    lib.elf_root_values.argtypes = [u32, u32, i32, i32, i32, out]
    lib.elf_root_values.restype = i32
    lib.elf_minimax_values.argtypes = [u32, u32, i32, i32, i32, out]
    lib.elf_minimax_values.restype = i32
    lib.elf_playouts.argtypes = [ctypes.c_uint64, ctypes.c_int64, i32, i32, i32]
    lib.elf_playouts.restype = ctypes.c_int64
    lib.elf_playout_trace.argtypes = [ctypes.POINTER(ctypes.c_uint8), i32, i32, i32, i32, ctypes.c_uint64,
                                      ctypes.POINTER(ctypes.c_uint8)]  # fmt: skip
    lib.elf_playout_trace.restype = i32
    lib.elf_greedy_playout.argtypes = [u32, u32, ctypes.POINTER(ctypes.c_uint8), i32, i32, i32, i32, i32, i32,
                                       i32, ctypes.c_uint64, u32, i32]  # fmt: skip
    lib.elf_greedy_playout.restype = i32
    lib.elf_ismcts.argtypes = [u32, u32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, ctypes.c_uint64, u32,
                               ctypes.c_double, i32, ctypes.POINTER(ctypes.c_uint8), i32, ctypes.POINTER(ctypes.c_int32),
                               ctypes.POINTER(ctypes.c_double)]  # fmt: skip
    lib.elf_ismcts.restype = i32
    lib.elf_version.restype = i32
    _lib = lib
    return lib


def available() -> bool:
    """Whether the compiled core is built and loads."""
    return _load() is not None


def library() -> ctypes.CDLL:
    lib = _load()
    if lib is None:
        raise CoreUnavailable(
            f"the compiled solver core {LIBRARY} is not built: run `make setup` or "
            "`python scripts/build_core.py`"
        )
    return lib


def use_c(core: str) -> bool:
    if core not in CORES:
        raise ValueError(f"core must be one of {', '.join(CORES)}, not {core!r}")
    if core == "python":
        return False
    if core == "c":
        library()
        return True
    return available()


def _call(fn: object, a: int, b: int, table: int, trump: int, must_head: bool) -> dict[int, int]:
    buf = (ctypes.c_int8 * 32)()
    fn(a, b, table, trump, 1 if must_head else 0, buf)  # type: ignore[operator]
    return {c: buf[c] for c in range(32) if buf[c] >= 0}


def root_values(
    a: int, b: int, table: int, trump: int, must_head: bool, core: str = "auto"
) -> dict[int, int]:
    """card -> the mover's future honours (see pysolve.root_values), by the chosen core."""
    if use_c(core):
        return _call(library().elf_root_values, a, b, table, trump, must_head)
    return pysolve.root_values(a, b, table, trump, must_head)


def minimax_values(
    a: int, b: int, table: int, trump: int, must_head: bool, core: str = "auto"
) -> dict[int, int]:
    """The plain minimax's answers (no pruning, no table), by the chosen core."""
    if use_c(core):
        return _call(library().elf_minimax_values, a, b, table, trump, must_head)
    return pysolve.minimax_values(a, b, table, trump, must_head)


def playouts(seed: int, n: int, hand_size: int = 6, trumps: bool = False, must_head: bool = False) -> int:
    """Play `n` whole random deals in the compiled core; returns seat 0's total honours (a checksum)."""
    return int(library().elf_playouts(seed, n, hand_size, int(trumps), int(must_head)))


def playout_trace(
    deck: list[int], dealer: int, hand_size: int, trumps: bool, must_head: bool, seed: int
) -> tuple[int, list[int]]:
    """One random deal of `deck` in the compiled core: (seat 0's honours, the 32 cards played)."""
    pack = (ctypes.c_uint8 * 32)(*deck)
    plays = (ctypes.c_uint8 * 32)()
    h0 = library().elf_playout_trace(pack, dealer, hand_size, int(trumps), int(must_head), seed, plays)
    return int(h0), list(plays)
