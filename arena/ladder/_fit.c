/* The season fit's passes over the pair list, fused (arena/ladder/kernel.py loads this with ctypes).

Each function is one pass over the E pairs (u, v, w or h), doing in one loop what NumPy does in
eight to ten (gathers, exp, products, two scatter sums), with the same sums to rounding (a u-side
sum is kept in a register over each run of equal u: a pair list is sorted by u). Plain C11, no
Python headers. */
#include <math.h>
#include <stdint.h>

/* The information's pair weights h = w·p(1−p), p = 1 / (1 + exp(theta[v] − theta[u])), each
   player's expected points (expected, zeroed by the caller: w·p to u, w·(1 − p) to v) and its total
   of h (degree, zeroed by the caller). */
void fit_information(int64_t e, const int64_t *u, const int64_t *v, const double *w,
                     const double *theta, double *h, double *expected, double *degree) {
    for (int64_t k = 0; k < e; k++) {
        const int64_t a = u[k], b = v[k];
        const double p = 1.0 / (1.0 + exp(theta[b] - theta[a]));
        const double x = w[k] * p;
        const double y = x - x * p;
        expected[a] += x;
        expected[b] += w[k] - x;
        h[k] = y;
        degree[a] += y;
        degree[b] += y;
    }
}

/* The same from e_i = exp(theta_i − c) (one exp a player, not a pair: p = e_u / (e_u + e_v)), the
   u side summed in registers over each run of equal u (a pair list is sorted by u; any order is
   still right, a run then being shorter). The caller uses it while theta's range keeps e finite. */
void fit_information_runs(int64_t e, const int64_t *u, const int64_t *v, const double *w,
                          const double *ex, double *h, double *expected, double *degree) {
    int64_t a = e ? u[0] : 0;
    double ea = e ? ex[a] : 0.0, xa = 0.0, ya = 0.0;
    for (int64_t k = 0; k < e; k++) {
        if (u[k] != a) {
            expected[a] += xa;
            degree[a] += ya;
            xa = ya = 0.0;
            a = u[k];
            ea = ex[a];
        }
        const int64_t b = v[k];
        const double eb = ex[b], inv = 1.0 / (ea + eb);
        const double x = w[k] * ea * inv; /* w·p */
        const double y = x * eb * inv;    /* w·p(1 − p) */
        xa += x;
        ya += y;
        expected[b] += w[k] - x;
        h[k] = y;
        degree[b] += y;
    }
    if (e) {
        expected[a] += xa;
        degree[a] += ya;
    }
}

/* out −= H x over the pairs (out holds diag·x from the caller): out[u] −= h·x[v], out[v] −= h·x[u];
   the u side summed in a register over each run of equal u (any order is still right). */
void fit_offdiagonal(int64_t e, const int64_t *u, const int64_t *v, const double *h, const double *x,
                     double *out) {
    int64_t a = e ? u[0] : 0;
    double xa = e ? x[a] : 0.0, acc = 0.0;
    for (int64_t k = 0; k < e; k++) {
        if (u[k] != a) {
            out[a] -= acc;
            acc = 0.0;
            a = u[k];
            xa = x[a];
        }
        const int64_t b = v[k];
        acc += h[k] * x[b];
        out[b] -= h[k] * xa;
    }
    if (e)
        out[a] -= acc;
}

/* The same product pair by pair (the u side scattered at every pair): the pass before the runs, kept
   for ARENA_FIT_KERNEL=pairs, the bench's same-run baseline. */
void fit_offdiagonal_pairs(int64_t e, const int64_t *u, const int64_t *v, const double *h, const double *x,
                           double *out) {
    for (int64_t k = 0; k < e; k++) {
        const int64_t a = u[k], b = v[k];
        out[a] -= h[k] * x[b];
        out[b] -= h[k] * x[a];
    }
}

/* The two-level covariance's C = L Rᵀ, off-diagonal part: c[u·k + g[v]] −= h and, for the v side,
   its transpose ct[g[u]·m + v] −= h (rows of Cᵀ stay near each other as the pairs go by u). */
void fit_coarse(int64_t e, const int64_t *u, const int64_t *v, const double *h, const int64_t *g,
                int64_t k, int64_t m, double *c, double *ct) {
    for (int64_t i = 0; i < e; i++) {
        c[u[i] * k + g[v[i]]] -= h[i];
        ct[g[u[i]] * m + v[i]] -= h[i];
    }
}

/* Each pair's games with its virtual draws w = games·(1 + c[u] + c[v]), each player's virtual draws
   (virtual_total, zeroed by the caller) and the pair's key u·n + v. */
void fit_weights(int64_t e, const int64_t *u, const int64_t *v, const double *games, const double *c,
                 int64_t n, double *w, double *virtual_total, int64_t *key) {
    for (int64_t k = 0; k < e; k++) {
        const int64_t a = u[k], b = v[k];
        const double x = games[k] * (c[a] + c[b]);
        w[k] = games[k] + x;
        virtual_total[a] += x;
        virtual_total[b] += x;
        key[k] = a * n + b;
    }
}

/* The gradient's pass without storing a pair: each player's expected points (expected, with each
   pair's virtual draws w = games·(1 + c[u] + c[v])), its virtual draws (virtual_total) and its total
   of information (degree), all zeroed by the caller, from e_i = exp(theta_i − const) as in
   fit_information_runs (the u side summed over each run of equal u). */
void fit_gradient(int64_t e, const int64_t *u, const int64_t *v, const double *games, const double *c,
                  const double *ex, double *expected, double *virtual_total, double *degree) {
    int64_t a = e ? u[0] : 0;
    double ea = e ? ex[a] : 0.0, ca = e ? c[a] : 0.0, xa = 0.0, ya = 0.0, va = 0.0;
    for (int64_t k = 0; k < e; k++) {
        if (u[k] != a) {
            expected[a] += xa;
            degree[a] += ya;
            virtual_total[a] += va;
            xa = ya = va = 0.0;
            a = u[k];
            ea = ex[a];
            ca = c[a];
        }
        const int64_t b = v[k];
        const double virt = games[k] * (ca + c[b]), w = games[k] + virt;
        const double eb = ex[b], inv = 1.0 / (ea + eb);
        const double x = w * ea * inv, y = x * eb * inv;
        xa += x;
        ya += y;
        va += virt;
        expected[b] += w - x;
        degree[b] += y;
        virtual_total[b] += virt;
    }
    if (e) {
        expected[a] += xa;
        degree[a] += ya;
        virtual_total[a] += va;
    }
}

/* The passes on the pair list in compressed rows (a pair list sorted by u): the pairs of player a are
   starts[a] .. starts[a+1] − 1, with their v as int32. Per pair they read 4 bytes of index where the
   passes above read 16 (u and v as int64): at 9M pairs the passes stream memory, so that and the
   loop over rows (no test of u at every pair) is most of their cost. The same sums in the same order
   as the passes by runs, so the same figures to the last bit. */

/* fit_information_runs on compressed rows. */
void fit_information_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *w,
                         const double *ex, double *h, double *expected, double *degree) {
    for (int64_t a = 0; a < m; a++) {
        const double ea = ex[a];
        double xa = 0.0, ya = 0.0;
        for (int64_t k = starts[a]; k < starts[a + 1]; k++) {
            const int32_t b = v[k];
            const double eb = ex[b], inv = 1.0 / (ea + eb);
            const double x = w[k] * ea * inv;
            const double y = x * eb * inv;
            xa += x;
            ya += y;
            expected[b] += w[k] - x;
            h[k] = y;
            degree[b] += y;
        }
        expected[a] += xa;
        degree[a] += ya;
    }
}

/* fit_offdiagonal on compressed rows: out −= H x. */
void fit_offdiagonal_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *h,
                         const double *x, double *out) {
    for (int64_t a = 0; a < m; a++) {
        const double xa = x[a];
        double acc = 0.0;
        for (int64_t k = starts[a]; k < starts[a + 1]; k++) {
            const int32_t b = v[k];
            acc += h[k] * x[b];
            out[b] -= h[k] * xa;
        }
        out[a] -= acc;
    }
}

/* fit_gradient on compressed rows. */
void fit_gradient_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *games,
                      const double *c, const double *ex, double *expected, double *virtual_total,
                      double *degree) {
    for (int64_t a = 0; a < m; a++) {
        const double ea = ex[a], ca = c[a];
        double xa = 0.0, ya = 0.0, va = 0.0;
        for (int64_t k = starts[a]; k < starts[a + 1]; k++) {
            const int32_t b = v[k];
            const double virt = games[k] * (ca + c[b]), w = games[k] + virt;
            const double eb = ex[b], inv = 1.0 / (ea + eb);
            const double x = w * ea * inv, y = x * eb * inv;
            xa += x;
            ya += y;
            va += virt;
            expected[b] += w - x;
            degree[b] += y;
            virtual_total[b] += virt;
        }
        expected[a] += xa;
        degree[a] += ya;
        virtual_total[a] += va;
    }
}

/* Compressed rows of a pair list: starts[a] = the first pair whose u ≥ a (m + 1 of them) and each
   pair's v as int32, in one pass over u and v; returns 0, or 1 when u is not sorted (nothing then
   holds). The caller checks that every index fits in an int32. */
int64_t fit_csr(int64_t e, const int64_t *u, const int64_t *v, int64_t m, int64_t *starts, int32_t *v32) {
    int64_t a = 0;
    for (int64_t k = 0; k < e; k++) {
        const int64_t uk = u[k];
        if (uk < 0 || uk < a - 1 || uk >= m)
            return 1;
        while (a <= uk)
            starts[a++] = k;
        v32[k] = (int32_t)v[k];
    }
    while (a <= m)
        starts[a++] = e;
    return 0;
}
