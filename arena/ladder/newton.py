"""The season fit's numerical core on the comparison graph's edge list: the Bradley–Terry Fisher
information (a weighted graph Laplacian) and its Newton step, solved by conjugate gradients.

Apart from `arena.ladder.fit` because it is the numerical core, while the fit holds the statistics
around it. The passes over the pairs run compiled where `arena.ladder.kernel` is built, else in NumPy. Nothing here is an n×n matrix: a group of m players with E pairs that met costs O(m + E)
memory, and one Laplacian product is two gathers and two `bincount`s over the edges.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from arena.ladder import kernel

CG_RTOL = 1e-3  # a Newton step's residual, relative to the gradient (inexact Newton: see newton_step)
CG_MAX = 500
EXP_SPREAD = 600.0  # log-odds: below, exp(±spread/2) is finite, and the compiled pass takes one exp a player


class StepError(ArithmeticError):
    """A Newton step could not be solved (the conjugate gradients broke down or did not converge)."""


@dataclass(frozen=True)
class Graph:
    """One connected group's comparison graph: m players, edges u < v (local indices) with their
    games and virtual draws `w` per pair."""

    m: int
    u: np.ndarray  # int64
    v: np.ndarray  # int64
    w: np.ndarray  # float64

    def __post_init__(self) -> None:  # the compiled kernel reads them as contiguous int64 and float64
        object.__setattr__(self, "u", np.ascontiguousarray(self.u, dtype=np.int64))
        object.__setattr__(self, "v", np.ascontiguousarray(self.v, dtype=np.int64))
        object.__setattr__(self, "w", np.ascontiguousarray(self.w, dtype=np.float64))

    @cached_property
    def rows(self) -> Rows | None:
        """The edges as compressed rows for the compiled passes (`rows`), None where they do not apply."""
        return rows(self.m, self.u, self.v)

    @cached_property
    def games_as_v(self) -> np.ndarray:
        """Each player's games and virtual draws on the v side of its pairs (constant over a fit)."""
        return np.bincount(self.v, self.w, self.m)

    @cached_property
    def u_runs(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(each player that has pairs on the u side, where its run of edges starts) when the edges
        are sorted by u, as a pair list is (its keys u·n + v sorted); None otherwise. A sum over the u
        side is then one `add.reduceat` over contiguous runs, several times faster than a `bincount`
        whose consecutive updates hit the same bin."""
        u = self.u
        if len(u) == 0 or not bool((u[1:] >= u[:-1]).all()):
            return None
        starts = np.flatnonzero(np.concatenate(([True], u[1:] != u[:-1])))
        return u[starts], starts

    def sum_u(self, edge_values: np.ndarray) -> np.ndarray:
        """Each player's sum of an edge quantity over the pairs where it is u."""
        runs = self.u_runs
        if runs is None:
            return np.bincount(self.u, edge_values, self.m)
        out = np.zeros(self.m)
        out[runs[0]] = np.add.reduceat(edge_values, runs[1])
        return out

    def degree(self, edge_values: np.ndarray) -> np.ndarray:
        """Each player's sum of an edge quantity (both ends)."""
        return self.sum_u(edge_values) + np.bincount(self.v, edge_values, self.m)

    def laplacian(self, h: np.ndarray, diag: np.ndarray, x: np.ndarray) -> np.ndarray:
        """(diag(diag) − H) x for the edge weights h, diag = each player's total of h."""
        lib = kernel.library()
        if lib is not None and (csr := self.rows) is not None:
            out = diag * x
            lib.fit_offdiagonal_csr(
                self.m, csr.starts, csr.v, h, np.ascontiguousarray(x), out, kernel.threads()
            )
            return out
        if lib is not None:
            out = diag * x
            product = lib.fit_offdiagonal if kernel.by_runs() else lib.fit_offdiagonal_pairs
            product(len(self.u), self.u, self.v, h, np.ascontiguousarray(x), out)
            return out
        along = x[self.v]
        along *= h
        out = diag * x
        out -= self.sum_u(along)
        along = x[self.u]
        along *= h
        out -= np.bincount(self.v, along, self.m)
        return out


@dataclass(frozen=True)
class Rows:
    """A pair list sorted by u as compressed rows: player a's pairs are starts[a] .. starts[a+1] − 1,
    their v as int32 (a quarter of the bytes of u and v as int64, for passes that stream memory)."""

    starts: np.ndarray  # int64, m + 1
    v: np.ndarray  # int32


_ROWS: list[tuple[weakref.ref, weakref.ref, int, Rows]] = []  # the last few, by their arrays
ROWS_KEPT = 2


def rows(m: int, u: np.ndarray, v: np.ndarray, build: bool = True) -> Rows | None:
    """`u`, `v` as compressed rows for the compiled passes, or None: no kernel, ARENA_FIT_KERNEL=runs
    or pairs (`kernel.by_rows`), u not sorted, or an index past int32. One pass over u and v, kept by
    the arrays' identity for the next fit of the same pairs (a refit of a tally with no new pair:
    `arena.ladder.tally` hands out the same arrays, which nothing writes to). `build` False: only
    those already made (a single pass over the pairs would not repay the pass that makes them)."""
    lib = kernel.library()
    if lib is None or not kernel.by_rows() or m >= 2**31 or u.dtype != np.int64 or v.dtype != np.int64:
        return None
    _ROWS[:] = [kept for kept in _ROWS if kept[0]() is not None and kept[1]() is not None]
    for ur, vr, mm, found in _ROWS:
        if ur() is u and vr() is v and mm == m and len(found.v) == len(v):
            return found
    if not (build and u.flags.c_contiguous and v.flags.c_contiguous):
        return None
    made = Rows(np.empty(m + 1, dtype=np.int64), np.empty(len(v), dtype=np.int32))
    if lib.fit_csr(len(u), u, v, m, made.starts, made.v) != 0:
        return None
    try:
        _ROWS.insert(0, (weakref.ref(u), weakref.ref(v), m, made))
    except TypeError:  # an array that takes no weak reference (a view of a buffer): not kept
        return made
    del _ROWS[ROWS_KEPT:]
    return made


def weights(
    n: int, u: np.ndarray, v: np.ndarray, games: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each pair's games with its virtual draws, w = games · (1 + c[u] + c[v]), each player's total
    of virtual draws, and each pair's key u·n + v."""
    lib = kernel.library()
    if lib is not None:
        u, v = np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64)
        w, total, key = np.empty(len(u)), np.zeros(n), np.empty(len(u), dtype=np.int64)
        games = np.ascontiguousarray(games, dtype=np.float64)
        if (csr := rows(n, u, v)) is not None:  # made here for the fit's passes that follow
            lib.fit_weights_csr(n, csr.starts, csr.v, games, c, n, w, total, key)
            return w, total, key
        lib.fit_weights(len(u), u, v, games, c, n, w, total, key)
        return w, total, key
    virtual = games * (c[u] + c[v])
    return games + virtual, np.bincount(u, virtual, n) + np.bincount(v, virtual, n), u * n + v


def information(
    graph: Graph, points: np.ndarray, theta: np.ndarray, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Fisher information's edge weights h = w · p (1 − p), p = P(u beats v), the gradient of the
    log-likelihood at theta (points minus each player's expected points), and each player's total of
    h (the information's diagonal). `out`: an array of E floats to write h into (a Newton iteration
    reuses the last one's: a new one of 9M floats costs its page faults, a tenth of the pass)."""
    lib = kernel.library()
    if lib is not None:
        e = len(graph.u)
        ok = out is not None and out.shape == (e,) and out.dtype == np.float64 and out.flags.c_contiguous
        h = out if ok and out is not None else np.empty(e)
        expected, degree = np.zeros(graph.m), np.zeros(graph.m)
        theta = np.ascontiguousarray(theta, dtype=np.float64)
        spread = float(theta.max(initial=0.0) - theta.min(initial=0.0))
        csr = graph.rows if spread < EXP_SPREAD else None
        if spread < EXP_SPREAD and (csr is not None or kernel.by_runs()):
            # one exp a player: e_u / (e_u + e_v) stays finite and exact to rounding
            ex = np.exp(theta - 0.5 * (theta.max(initial=0.0) + theta.min(initial=0.0)))
            if csr is not None:
                lib.fit_information_csr(
                    graph.m, csr.starts, csr.v, graph.w, ex, h, expected, degree, kernel.threads()
                )
                return h, points - expected, degree
            lib.fit_information_runs(len(graph.u), graph.u, graph.v, graph.w, ex, h, expected, degree)
        else:
            lib.fit_information(len(graph.u), graph.u, graph.v, graph.w, theta, h, expected, degree)
        return h, points - expected, degree
    p = theta[graph.v]  # p = 1 / (1 + exp(theta_v − theta_u)), in place: each temporary is E floats
    p -= theta[graph.u]
    np.exp(p, out=p)
    p += 1.0
    np.reciprocal(p, out=p)
    expected = graph.w * p
    # each player's expected points: as u, Σ w·p; as v, Σ w·(1 − p) = its games as v − Σ w·p
    grad = points - graph.sum_u(expected) - graph.games_as_v + np.bincount(graph.v, expected, graph.m)
    p *= expected
    np.subtract(expected, p, out=expected)  # h = w·p − w·p² = w·p (1 − p)
    return expected, grad, graph.degree(expected)


def gradient(
    n: int,
    u: np.ndarray,
    v: np.ndarray,
    games: np.ndarray,
    c: np.ndarray,
    real_points: np.ndarray,
    theta: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The log-likelihood's gradient at theta (with the virtual draws c, as `weights` spreads them)
    and the information's diagonal, in one pass over the pairs that stores nothing per pair: what
    `arena.ladder.refit` checks its step with. The NumPy fallback is `weights` then `information`."""
    lib = kernel.library()
    theta = np.ascontiguousarray(theta, dtype=np.float64)
    spread = float(theta.max(initial=0.0) - theta.min(initial=0.0))
    if lib is not None and spread < EXP_SPREAD:
        expected, virtual, degree = np.zeros(n), np.zeros(n), np.zeros(n)
        ex = np.exp(theta - 0.5 * (theta.max(initial=0.0) + theta.min(initial=0.0)))
        games = np.ascontiguousarray(games, dtype=np.float64)
        if (csr := rows(n, u, v, build=False)) is not None:
            lib.fit_gradient_csr(
                n, csr.starts, csr.v, games, c, ex, expected, virtual, degree, kernel.threads()
            )
            return real_points + 0.5 * virtual - expected, degree
        u, v = np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64)
        c = np.ascontiguousarray(c, dtype=np.float64)
        if kernel.by_rows():  # on the pairs as they are, cut among the threads
            lib.fit_gradient_threads(
                len(u), u, v, games, c, ex, expected, virtual, degree, kernel.threads(), n
            )
        else:
            lib.fit_gradient(len(u), u, v, games, c, ex, expected, virtual, degree)
        return real_points + 0.5 * virtual - expected, degree
    w, virtual, _ = weights(n, u, v, games, c)
    _, grad, degree = information(Graph(n, u, v, w), real_points + 0.5 * virtual, theta)
    return grad, degree


QUADRATIC = 0.4  # Newton's next step against the square of the last (measured: the module docstring)
RTOL_LOOSE = 0.1  # the conjugate gradients' residual goal at most (relative)


def forcing(predicted: float, tol: float) -> float:
    """The conjugate gradients' residual goal for a Newton step of about `predicted`: what leaves an
    error (rtol·step) well under both the step's own Newton error (0.4·step²: no tighter) and `tol`
    (the last step: no tighter either), within CG_RTOL..RTOL_LOOSE. Near the answer a step of 1e-5
    needs a residual of 5%, not 0.1%: a product or two of the pass over the pairs fewer."""
    if predicted <= 0.0:
        return RTOL_LOOSE
    return min(RTOL_LOOSE, max(CG_RTOL, 0.5 * tol / predicted, 0.1 * predicted))


def newton_step(
    graph: Graph,
    h: np.ndarray,
    diag: np.ndarray,
    grad: np.ndarray,
    free: np.ndarray | None,
    rtol: float = CG_RTOL,
) -> np.ndarray:
    """Solve the Newton system by preconditioned conjugate gradients (Jacobi preconditioner); `diag`
    is each player's total of h, the information's diagonal.

    `free`: the players not fixed by an anchor (their step is solved, the rest stay 0); None: no
    anchor, the ratings' mean is fixed instead, and the system is solved on the space of steps with
    zero sum, where the Laplacian is definite (the gradient sums to zero there, so CG stays in it).
    The residual goal is `rtol` of the gradient (inexact Newton: far from the answer an exact step is
    wasted work, near it the gradient itself is tiny)."""
    mask = np.ones(graph.m, dtype=bool) if free is None else free
    rhs = np.where(mask, grad, 0.0)
    if free is None:
        rhs -= rhs.mean()
    pre = np.where(mask, np.maximum(diag, 1e-300), 1.0)
    x = np.zeros(graph.m)
    r = rhs.copy()
    goal = rtol**2 * float(rhs @ rhs)
    if goal == 0.0:
        return x
    z = r / pre
    if free is None:
        z -= z.mean()
    d = z.copy()
    rz = float(r @ z)
    for _ in range(CG_MAX):
        if float(r @ r) <= goal:
            return x
        q = graph.laplacian(h, diag, d)
        q[~mask] = 0.0
        dq = float(d @ q)
        if not dq > 0.0:
            raise StepError("the information matrix is not positive definite on the free players")
        alpha = rz / dq
        x += alpha * d
        r -= alpha * q
        z = r / pre
        z[~mask] = 0.0
        if free is None:
            z -= z.mean()
        rz, before = float(r @ z), rz
        d = z + (rz / before) * d
    raise StepError(f"the conjugate gradients did not reach a residual of {rtol:g} in {CG_MAX} iterations")


def components(m: int, u: np.ndarray, v: np.ndarray, touched: np.ndarray | None = None) -> np.ndarray:
    """Each player's connected group label (the smallest player index in it) for edges u–v; players
    without an edge are their own group. Label propagation with pointer jumping: O(E) a round, and a
    handful of rounds on a ladder's well-connected graph.

    `touched`: which players have an edge, when the caller knows. A large ladder is first tried on
    a sample of its edges (every k-th, about 8 per player): if that alone joins every touched player
    into one group, so do all the edges, and the full rounds are skipped (a 10,000-bot ladder's
    9M pairs cost several rounds of `minimum.at` over all of them otherwise)."""
    if touched is not None and len(u) > SAMPLE_PER_PLAYER * 4 * m:
        step = len(u) // (SAMPLE_PER_PLAYER * m)
        label = _groups(m, u, v, step)
        first = np.flatnonzero(touched)
        if len(first) and bool((label[first] == first[0]).all()):
            return label
    return _groups(m, u, v, 1)


SAMPLE_PER_PLAYER = 8


def _groups(m: int, u: np.ndarray, v: np.ndarray, step: int) -> np.ndarray:
    """The labels of the edges u[::step]–v[::step]: compiled union–find (one pass, a few ms at 9M
    pairs), else label propagation in NumPy (the same labels)."""
    lib = kernel.library()
    if lib is None or not kernel.by_rows():
        return _propagate(m, u[::step], v[::step])
    label = np.empty(m, dtype=np.int64)
    u, v = np.ascontiguousarray(u, dtype=np.int64), np.ascontiguousarray(v, dtype=np.int64)
    lib.fit_components(len(u), u, v, step, m, label)
    return label


def _propagate(m: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    label = np.arange(m)
    while True:
        low = np.minimum(label[u], label[v])
        new = label.copy()
        np.minimum.at(new, u, low)
        np.minimum.at(new, v, low)
        new = new[new]  # pointer jumping: follow each label to its own label
        while True:
            jumped = new[new]
            if np.array_equal(jumped, new):
                break
            new = jumped
        if np.array_equal(new, label):
            return label
        label = new
