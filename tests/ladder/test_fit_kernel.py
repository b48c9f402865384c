"""The season fit's compiled passes (`arena.ladder.kernel`, `_fit.c`) against the NumPy ones they
stand for: built in place, and the same fit to rounding, cold and warm, for a large group (two-level
covariance), an anchored one and a small one (exact covariance)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bench.ladder import synthetic_season
from arena.ladder import kernel, newton
from arena.ladder.fit import Fit, fit_ratings


def _fits(monkeypatch: pytest.MonkeyPatch, *args, **kwargs) -> tuple[Fit, Fit]:
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    assert kernel.library() is not None  # gcc is part of the setup: the kernel must build here
    compiled = fit_ratings(*args, **kwargs)
    monkeypatch.setenv("ARENA_FIT_KERNEL", "0")
    assert kernel.library() is None
    return compiled, fit_ratings(*args, **kwargs)


@pytest.mark.parametrize(
    ("bots", "matches", "anchors"), [(300, 40_000, None), (300, 40_000, {0: 1400.0}), (30, 2000, None)]
)
def test_the_compiled_passes_give_the_numpy_fit(
    monkeypatch: pytest.MonkeyPatch, bots: int, matches: int, anchors: dict[int, float] | None
) -> None:
    _, a, b, score = synthetic_season(bots, matches, seed=9)
    compiled, numpy = _fits(monkeypatch, bots, a, b, score, anchors=anchors)
    assert compiled.iterations == numpy.iterations
    np.testing.assert_allclose(compiled.ratings, numpy.ratings, rtol=0, atol=1e-9)
    np.testing.assert_allclose(compiled.var, numpy.var, rtol=1e-9)
    np.testing.assert_allclose(compiled.info, numpy.info, rtol=1e-12)
    warm_c, warm_n = _fits(monkeypatch, bots, a, b, score, anchors=anchors, warm=numpy.ratings + 5.0)
    np.testing.assert_allclose(warm_c.ratings, warm_n.ratings, rtol=0, atol=1e-9)


def test_the_kernel_is_rebuilt_when_older_than_its_source() -> None:
    import os

    built = kernel.build()
    source_time = kernel.SOURCE.stat().st_mtime
    os.utime(built, (source_time - 10, source_time - 10))
    assert kernel.build().stat().st_mtime >= source_time


def test_without_a_compiler_the_fit_runs_in_numpy_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path, caplog: pytest.LogCaptureFixture
) -> None:
    """The build's warning goes to the operator's log only and names the compiler's failure, no
    season data (docs/security.md); the fit then runs its NumPy passes."""
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    monkeypatch.setenv("CC", "false")
    monkeypatch.setattr(kernel, "TARGET", tmp_path / "_arena_fit.so")
    monkeypatch.setattr(kernel, "_tried", False)
    monkeypatch.setattr(kernel, "_lib", None)
    with caplog.at_level("WARNING", logger="arena.ladder.kernel"):
        assert kernel.library() is None
    assert "building the fit kernel failed: false" in caplog.text and "using NumPy" in caplog.text
    assert not (tmp_path / "_arena_fit.so").exists()
    _, a, b, score = synthetic_season(40, 3000, seed=1)
    fit = fit_ratings(40, a, b, score)
    assert np.isfinite(fit.ratings).all()


def test_the_passes_by_runs_give_the_fit_of_the_passes_pair_by_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """One exp a player and u-side sums over runs (the default) against an exp and a scatter a pair
    (ARENA_FIT_KERNEL=pairs, the bench's baseline): the same fit to rounding."""
    _, a, b, score = synthetic_season(300, 40_000, seed=10)
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    assert kernel.library() is not None and kernel.by_runs()
    runs = fit_ratings(300, a, b, score)
    monkeypatch.setenv("ARENA_FIT_KERNEL", "pairs")
    assert kernel.library() is not None and not kernel.by_runs()
    pairs = fit_ratings(300, a, b, score)
    assert runs.iterations == pairs.iterations
    np.testing.assert_allclose(runs.ratings, pairs.ratings, rtol=0, atol=1e-9)
    np.testing.assert_allclose(runs.var, pairs.var, rtol=1e-9)


def test_a_library_of_an_older_source_is_built_again(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A library that lacks a pass its source defines (built from an older source, yet newer than
    it: a copied file) is built again from the source, not loaded and failing at the first fit."""
    import os
    import subprocess

    old = tmp_path / "old.c"
    old.write_text("void fit_information(void) {}\n")
    target = tmp_path / "_arena_fit.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(target), str(old)], check=True)
    future = kernel.SOURCE.stat().st_mtime + 100
    os.utime(target, (future, future))  # newer than the source: `build` alone would keep it
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    monkeypatch.setattr(kernel, "TARGET", target)
    monkeypatch.setattr(kernel, "_tried", False)
    monkeypatch.setattr(kernel, "_lib", None)
    lib = kernel.library()
    assert lib is not None and all(hasattr(lib, name) for name in kernel.PASSES)
    _, a, b, score = synthetic_season(300, 40_000, seed=12)
    compiled = fit_ratings(300, a, b, score)
    monkeypatch.setenv("ARENA_FIT_KERNEL", "0")
    np.testing.assert_allclose(compiled.ratings, fit_ratings(300, a, b, score).ratings, rtol=0, atol=1e-9)


def test_the_passes_on_compressed_rows_give_the_fit_of_the_passes_by_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """int32 rows with each player's first pair (the default) against int64 u and v summed over runs
    (ARENA_FIT_KERNEL=runs, the bench's baseline): the same sums in the same order, the same fit to the
    last bit, cold and refitted."""
    from arena.ladder.fit import Pairs, fit_pairs
    from arena.ladder.refit import refit

    _, a, b, score = synthetic_season(300, 41_000, seed=13)
    fits = {}
    monkeypatch.setenv("ARENA_FIT_THREADS", "1")
    for mode in ("1", "runs"):
        monkeypatch.setenv("ARENA_FIT_KERNEL", mode)
        pairs = Pairs.from_matches(300, a[:40_000], b[:40_000], score[:40_000])
        cold = fit_pairs(pairs)
        assert (newton.rows(300, pairs.u, pairs.v) is not None) == (mode == "1")
        more = Pairs.from_matches(300, a, b, score)
        newton.rows(300, more.u, more.v)  # made once: the refit's gradient pass then reads them
        new = Pairs.from_matches(300, a[40_000:], b[40_000:], score[40_000:])
        fits[mode] = (cold, refit(cold, more, new, min_pairs=0))
    for rows_fit, runs_fit in zip(fits["1"], fits["runs"], strict=True):
        np.testing.assert_array_equal(rows_fit.ratings, runs_fit.ratings)
        np.testing.assert_array_equal(rows_fit.var, runs_fit.var)
        np.testing.assert_array_equal(rows_fit.pair_info, runs_fit.pair_info)


def test_compressed_rows_are_made_only_of_a_sorted_pair_list_and_kept_by_its_arrays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    u = np.array([0, 0, 1, 3], dtype=np.int64)
    v = np.array([1, 2, 3, 4], dtype=np.int64)
    assert newton.rows(5, u, v, build=False) is None  # not made yet
    made = newton.rows(5, u, v)
    assert made is not None
    np.testing.assert_array_equal(made.starts, [0, 2, 3, 3, 4, 4])
    np.testing.assert_array_equal(made.v, v)
    assert made.v.dtype == np.int32
    assert newton.rows(5, u, v, build=False) is made  # the same arrays: kept
    assert newton.rows(5, u.copy(), v) is not made  # other arrays: made again
    assert newton.rows(5, u[::-1].copy(), v) is None  # not sorted by u
    assert newton.rows(3, u, v) is None  # a player past m


def test_the_passes_on_several_threads_give_the_fit_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass cut among threads (each part's sums apart, added after in order) against the caller's
    thread alone: the same fit to rounding, cold and refitted, and the same from run to run."""
    from arena.ladder.fit import Pairs, fit_pairs
    from arena.ladder.refit import refit

    _, a, b, score = synthetic_season(700, 301_000, seed=14)
    pairs = Pairs.from_matches(700, a[:300_000], b[:300_000], score[:300_000])
    assert len(pairs.u) > 2 * 65_536  # the parts' least size (_fit.c MIN_PART): two parts at least
    more = Pairs.from_matches(700, a, b, score)
    new = Pairs.from_matches(700, a[300_000:], b[300_000:], score[300_000:])
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    fits = {}
    for threads in ("1", "2", "3", "2"):
        monkeypatch.setenv("ARENA_FIT_THREADS", threads)
        cold = fit_pairs(pairs)
        fits.setdefault(threads, []).append((cold, refit(cold, more, new, min_pairs=0)))
    for one, other in zip(fits["1"][0], fits["2"][0], strict=True):
        np.testing.assert_allclose(other.ratings, one.ratings, rtol=0, atol=1e-9)
        np.testing.assert_allclose(other.var, one.var, rtol=1e-9)
    np.testing.assert_allclose(fits["3"][0][0].ratings, fits["1"][0][0].ratings, rtol=0, atol=1e-9)
    for first, again in zip(fits["2"][0], fits["2"][1], strict=True):  # run to run: to the last bit
        np.testing.assert_array_equal(first.ratings, again.ratings)


def test_the_compiled_groups_are_the_label_propagations(monkeypatch: pytest.MonkeyPatch) -> None:
    """Union–find in C against label propagation in NumPy: each player labelled with the smallest
    index of its group, on sparse graphs of many groups, on every k-th edge too."""
    monkeypatch.setenv("ARENA_FIT_KERNEL", "1")
    rng = np.random.default_rng(15)
    for m, e in ((50, 30), (1000, 700), (1000, 5000), (20, 0)):
        u, v = rng.integers(0, m, e), rng.integers(0, m, e)
        keep = u != v
        u, v = u[keep], v[keep]
        for step in (1, 3):
            np.testing.assert_array_equal(
                newton._groups(m, u, v, step), newton._propagate(m, u[::step], v[::step])
            )
