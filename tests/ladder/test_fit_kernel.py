"""The season fit's compiled passes (`arena.ladder.kernel`, `_fit.c`) against the NumPy ones they
stand for: built in place, and the same fit to rounding, cold and warm, for a large group (two-level
covariance), an anchored one and a small one (exact covariance)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.bench.ladder import synthetic_season
from arena.ladder import kernel
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
