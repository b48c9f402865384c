"""A large group's rating covariance without an n×n matrix: a two-level approximation of the inverse
of the Fisher information (a weighted graph Laplacian L), exact on a coarse space and diagonal
(Jacobi) on the rest.

The players are cut into K runs of neighbouring ratings (aggregates, R the K×m indicator matrix);
L_c = R L Rᵀ is the K×K coarse information. The approximation is the deflated (A-DEF2) form

    B = Pᵀ D⁻¹ P + Rᵀ L_c⁺ R,   P = I − L Rᵀ L_c⁺ R,   D = diag(L),

exact for anything in the coarse space (the smooth, whole-ladder modes: a band of bots drifting
together, which the diagonal alone misses) and the diagonal's 1/d_i on what is left. With
Q = L Rᵀ L_c⁺ (m×K) an entry is B_ij = δ_ij/d_i − Q_j,g(i)/d_j − Q_i,g(j)/d_i + (QᵀD⁻¹Q + L_c⁺)_g(i),g(j),
so the memory is O(mK) and any pair's covariance costs O(1). Measured against the exact inverse
(docs/ladder.md): its intervals are within a few percent where the diagonal alone was 17% short
for the strongest and weakest bots of a matchmaking ladder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from arena.ladder import kernel
from arena.ladder.newton import Graph

AGGREGATES = 128  # coarse runs at most (a K×K pseudo-inverse and an m×K table)
RUN = 2  # players per run at least


@dataclass(frozen=True)
class Coarse:
    """One mean-anchored group's two-level covariance (log-odds units²), by local player index."""

    d: np.ndarray  # each player's information
    g: np.ndarray  # each player's aggregate
    q: np.ndarray  # m×K: Q = L Rᵀ L_c⁺
    mc: np.ndarray  # K×K: Qᵀ D⁻¹ Q + L_c⁺
    lc_pinv: np.ndarray  # K×K: L_c⁺

    def cov(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """B_ij for local indices (before centring on the mean: differences need no centring)."""
        gi, gj = self.g[i], self.g[j]
        out = -self.q[j, gi] / self.d[j] - self.q[i, gj] / self.d[i] + self.mc[gi, gj]
        return out + np.where(i == j, 1.0 / self.d[i], 0.0)

    def apply(self, x: np.ndarray) -> np.ndarray:
        """B x (log-odds units² times x's units), O(mK): Pᵀ D⁻¹ P x + Rᵀ L_c⁺ R x, with P x = x − Q R x
        and Pᵀ y = y − Rᵀ Qᵀ y. An approximate inverse of the information: `arena.ladder.refit`'s step."""
        k = self.mc.shape[0]
        rx = np.bincount(self.g, x, k)
        y = (x - _mv(self.q, rx)) / self.d
        return y - _mv(self.q.T, y)[self.g] + _mv(self.lc_pinv, rx)[self.g]

    def variances(self) -> np.ndarray:
        """Each rating's variance about the group's mean: B_ii − 2 (B1)_i/m + 1ᵀB1/m²."""
        m = len(self.d)
        every = np.arange(m)
        b_ii = self.cov(every, every)
        sizes = np.bincount(self.g, minlength=self.mc.shape[0]).astype(np.float64)
        # B1 = Pᵀ D⁻¹ P1 + Rᵀ L_c⁺ R1, with P1 = 1 − Q R1, and Pᵀx = x − Rᵀ Qᵀ x
        lc_pinv_sizes = _mv(self.lc_pinv, sizes)
        y = (1.0 - _mv(self.q, sizes)) / self.d
        b1 = y - _mv(self.q.T, y)[self.g] + lc_pinv_sizes[self.g]
        return b_ii - 2.0 * b1 / m + b1.sum() / m**2


def _spd_inverse(a: np.ndarray) -> np.ndarray:
    """The inverse of a small symmetric positive definite matrix by Gauss–Jordan elimination (no
    pivoting needed), in NumPy's own loops: LAPACK's through OpenBLAS's threads took 100–200 ms for
    a 128×128 inverse on the loaded machine (an eigendecomposition 0.2–1.5 s), this 17 ms."""
    out = np.array(a, dtype=np.float64)
    for k in range(len(out)):
        pivot = out[k, k]
        row, col = out[k].copy(), out[:, k].copy()
        out -= np.multiply.outer(col / pivot, row)
        out[k, :] = row / pivot
        out[:, k] = -col / pivot
        out[k, k] = 1.0 / pivot
    return out


SMALL_PRODUCT = 1 << 24  # multiply-adds: below, a matrix product runs in einsum's loop, not BLAS
ONE_THREAD = 1 << 18  # multiply-adds: OpenBLAS's gemm runs on one thread at or below 65536 · 4


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b; a small one (a few hundred bots) without BLAS, whose threads took 50 ms for a 200×100
    by 100×100 product on the loaded machine, a large one (10,000×128 by 128×128) with it. One whose
    inner dimension is the long one (Qᵀ by D⁻¹Q: 128×10,000 by 10,000×128) is summed over slices of
    it small enough for one thread: OpenBLAS split it over both threads, and on the loaded machine
    took 1.5 s (240 ms of CPU) where the slices take 90 ms (24 ms)."""
    if a.shape[0] * a.shape[1] * b.shape[1] < SMALL_PRODUCT:
        small: np.ndarray = np.einsum("ij,jk->ik", a, b)
        return small
    if a.shape[1] <= max(a.shape[0], b.shape[1]):
        return np.asarray(a @ b)
    step = max(1, ONE_THREAD // (a.shape[0] * b.shape[1]))
    out = np.zeros((a.shape[0], b.shape[1]))
    for start in range(0, a.shape[1], step):
        out += a[:, start : start + step] @ b[start : start + step]
    return out


def _mv(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """a @ x without BLAS: OpenBLAS's threads took 34 ms (median) for a 10,000×128 product on the
    loaded machine, einsum's own loop under a millisecond."""
    out: np.ndarray = np.einsum("ij,j->i", a, x)
    return out


def coarse(graph: Graph, h: np.ndarray, d: np.ndarray, theta: np.ndarray) -> Coarse:
    """The two-level covariance of a mean-anchored group at its fitted `theta` (information pair
    weights `h`, each player's total `d`), aggregates being runs of neighbouring ratings."""
    m = graph.m
    k = max(2, min(AGGREGATES, m // RUN))
    order = np.argsort(theta, kind="stable")
    g = np.empty(m, dtype=np.int64)
    g[order] = np.arange(m) * k // m
    u, v = graph.u, graph.v
    # C = L Rᵀ (m×K): d_i on the player's own aggregate, −h toward each neighbour's. Each side is
    # summed with keys that stay near each other as the pairs go by (sorted by u): row u of C for
    # the u side, and row g[u] of Cᵀ for the v side (a scatter into random rows of C costs 5x more).
    flat: np.ndarray = np.bincount(np.arange(m) * k + g, d, m * k)
    ct: np.ndarray = np.zeros(k * m)
    lib = kernel.library()
    if lib is not None and (csr := graph.rows) is not None:
        lib.fit_coarse_csr(m, csr.starts, csr.v, h, g, k, flat, ct)
    elif lib is not None:
        lib.fit_coarse(len(u), u, v, h, g, k, m, flat, ct)
    else:
        flat -= np.bincount(u * k + g[v], h, m * k)
        ct -= np.bincount(g[u] * m + v, h, k * m)
    c = flat.reshape(m, k) + ct.reshape(k, m).T
    lc = np.add.reduceat(c[order], np.searchsorted(g[order], np.arange(k)))  # L_c = R C: runs by rating
    # L_c⁺ = (L_c + J/K)⁻¹ − J/K: the coarse graph is connected (its group is), so its Laplacian's only
    # null vector is the constant one
    lc_pinv = _spd_inverse(0.5 * (lc + lc.T) + 1.0 / k) - 1.0 / k
    q = _mm(c, lc_pinv)
    return Coarse(d, g, q, _mm(q.T, q / d[:, None]) + lc_pinv, lc_pinv)
