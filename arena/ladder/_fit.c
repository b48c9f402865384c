/* The season fit's passes over the pair list, fused (arena/ladder/kernel.py loads this with ctypes).

Each function is one pass over the E pairs (u, v, w or h), doing in one loop what NumPy does in
eight to ten (gathers, exp, products, two scatter sums), with the same sums to rounding (a u-side
sum is kept in a register over each run of equal u: a pair list is sorted by u). Plain C11, no
Python headers. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define MIN_PART 65536 /* pairs: a part no smaller (a thread's start costs tens of microseconds) */

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
   passes above read 16 (u and v as int64), and they loop over rows (no test of u at every pair).

   Each runs on `threads` threads (1: the caller's alone), cut into parts of about as many pairs;
   a part's sums go to its own per-player arrays, added into the caller's at the end in the order of
   the parts, so a fit's figures depend on the number of threads only to rounding and are the same
   from run to run. With one thread they are those of the passes by runs, to the last bit. */

#define MAX_THREADS 16
#define MAX_SUMS 3

typedef void (*body_t)(const void *args, int64_t lo, int64_t hi, double *const *sums);

typedef struct {
    body_t body;
    const void *args;
    int64_t lo, hi;
    double *sums[MAX_SUMS];
} part_t;

static void *run_part(void *p) {
    part_t *t = (part_t *)p;
    t->body(t->args, t->lo, t->hi, t->sums);
    return NULL;
}

/* body over [0, n) in `threads` parts cut at cut[1..threads−1] (cut[0] = 0, cut[threads] = n). Part 0
   runs on the caller's thread into `sums` (nsums arrays of m doubles, holding what the caller put
   there); the others into zeroed arrays of their own, added to `sums` after. A thread or memory
   that cannot be had: that part runs on the caller's thread (the same figures). */
static void parallel(body_t body, const void *args, int64_t threads, const int64_t *cut, int nsums,
                     double *const *sums, int64_t m) {
    part_t parts[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    double *space = NULL;
    if (threads > 1)
        space = calloc((size_t)((threads - 1) * nsums * m), sizeof(double));
    if (space == NULL)
        threads = 1;
    for (int64_t t = 0; t < threads; t++) {
        parts[t].body = body;
        parts[t].args = args;
        parts[t].lo = t == 0 ? 0 : cut[t];
        parts[t].hi = threads == 1 ? cut[MAX_THREADS] : cut[t + 1];
        for (int i = 0; i < nsums; i++)
            parts[t].sums[i] = t == 0 ? sums[i] : space + ((t - 1) * nsums + i) * m;
    }
    for (int64_t t = 1; t < threads; t++)
        started[t] = pthread_create(&ids[t], NULL, run_part, &parts[t]) == 0;
    run_part(&parts[0]);
    for (int64_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else
            run_part(&parts[t]);
        for (int i = 0; i < nsums; i++)
            for (int64_t j = 0; j < m; j++)
                sums[i][j] += parts[t].sums[i][j];
    }
    free(space);
}

/* Cut rows 0..m into `threads` parts of about as many pairs each (cut[MAX_THREADS] = m). */
static int64_t cut_rows(int64_t m, const int64_t *starts, int64_t threads, int64_t *cut) {
    const int64_t e = starts[m];
    if (threads < 1 || e < 2 * MIN_PART)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > e / MIN_PART)
        threads = e / MIN_PART > 0 ? e / MIN_PART : 1;
    cut[0] = 0;
    cut[MAX_THREADS] = m;
    int64_t a = 0;
    for (int64_t t = 1; t < threads; t++) {
        const int64_t goal = e / threads * t;
        while (a < m && starts[a] < goal)
            a++;
        cut[t] = a;
    }
    cut[threads] = m;
    return threads;
}

/* Cut pairs 0..e into `threads` parts of as many pairs (cut[MAX_THREADS] = e). */
static int64_t cut_pairs(int64_t e, int64_t threads, int64_t *cut) {
    if (threads < 1 || e < 2 * MIN_PART)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads > e / MIN_PART)
        threads = e / MIN_PART > 0 ? e / MIN_PART : 1;
    cut[0] = 0;
    cut[MAX_THREADS] = e;
    for (int64_t t = 1; t < threads; t++)
        cut[t] = e / threads * t;
    cut[threads] = e;
    return threads;
}

typedef struct {
    const int64_t *starts;
    const int32_t *v;
    const double *w, *ex, *x, *c;
    double *h;
    int64_t n;
    int64_t *key;
} rows_t;

static void information_rows(const void *p, int64_t lo, int64_t hi, double *const *sums) {
    const rows_t *r = (const rows_t *)p;
    const int64_t *starts = r->starts;
    const int32_t *v = r->v;
    const double *w = r->w, *ex = r->ex;
    double *h = r->h, *expected = sums[0], *degree = sums[1];
    for (int64_t a = lo; a < hi; a++) {
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

/* fit_information_runs on compressed rows. */
void fit_information_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *w,
                         const double *ex, double *h, double *expected, double *degree, int64_t threads) {
    rows_t r = {.starts = starts, .v = v, .w = w, .ex = ex, .h = h};
    int64_t cut[MAX_THREADS + 1];
    double *sums[2] = {expected, degree};
    parallel(information_rows, &r, cut_rows(m, starts, threads, cut), cut, 2, sums, m);
}

static void offdiagonal_rows(const void *p, int64_t lo, int64_t hi, double *const *sums) {
    const rows_t *r = (const rows_t *)p;
    const int64_t *starts = r->starts;
    const int32_t *v = r->v;
    const double *h = r->w, *x = r->x;
    double *out = sums[0];
    for (int64_t a = lo; a < hi; a++) {
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

/* fit_offdiagonal on compressed rows: out −= H x. */
void fit_offdiagonal_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *h,
                         const double *x, double *out, int64_t threads) {
    rows_t r = {.starts = starts, .v = v, .w = h, .x = x};
    int64_t cut[MAX_THREADS + 1];
    double *sums[1] = {out};
    parallel(offdiagonal_rows, &r, cut_rows(m, starts, threads, cut), cut, 1, sums, m);
}

static void gradient_rows(const void *p, int64_t lo, int64_t hi, double *const *sums) {
    const rows_t *r = (const rows_t *)p;
    const int64_t *starts = r->starts;
    const int32_t *v = r->v;
    const double *games = r->w, *c = r->c, *ex = r->ex;
    double *expected = sums[0], *virtual_total = sums[1], *degree = sums[2];
    for (int64_t a = lo; a < hi; a++) {
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

/* fit_gradient on compressed rows. */
void fit_gradient_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *games,
                      const double *c, const double *ex, double *expected, double *virtual_total,
                      double *degree, int64_t threads) {
    rows_t r = {.starts = starts, .v = v, .w = games, .c = c, .ex = ex};
    int64_t cut[MAX_THREADS + 1];
    double *sums[3] = {expected, virtual_total, degree};
    parallel(gradient_rows, &r, cut_rows(m, starts, threads, cut), cut, 3, sums, m);
}

typedef struct {
    const int64_t *u, *v;
    const double *games, *c, *ex;
} pairs_t;

static void gradient_pairs(const void *p, int64_t lo, int64_t hi, double *const *sums) {
    const pairs_t *r = (const pairs_t *)p;
    fit_gradient(hi - lo, r->u + lo, r->v + lo, r->games + lo, r->c, r->ex, sums[0], sums[1], sums[2]);
}

/* fit_gradient on `threads` threads, each over a range of the pairs (the int64 u and v of a pair list
   not made into rows: a refit's, whose one or two passes would not repay making them). */
void fit_gradient_threads(int64_t e, const int64_t *u, const int64_t *v, const double *games, const double *c,
                          const double *ex, double *expected, double *virtual_total, double *degree,
                          int64_t threads, int64_t m) {
    pairs_t r = {.u = u, .v = v, .games = games, .c = c, .ex = ex};
    int64_t cut[MAX_THREADS + 1];
    double *sums[3] = {expected, virtual_total, degree};
    parallel(gradient_pairs, &r, cut_pairs(e, threads, cut), cut, 3, sums, m);
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

/* fit_weights on compressed rows (both sides summed pair by pair, in its order: the same totals). */
void fit_weights_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *games, const double *c,
                     int64_t n, double *w, double *virtual_total, int64_t *key) {
    for (int64_t a = 0; a < m; a++) {
        const double ca = c[a];
        for (int64_t k = starts[a]; k < starts[a + 1]; k++) {
            const int32_t b = v[k];
            const double x = games[k] * (ca + c[b]);
            w[k] = games[k] + x;
            virtual_total[a] += x;
            virtual_total[b] += x;
            key[k] = a * n + b;
        }
    }
}

/* fit_coarse on compressed rows (row a of C and row g[a] of Cᵀ stay put over a's pairs). */
void fit_coarse_csr(int64_t m, const int64_t *starts, const int32_t *v, const double *h, const int64_t *g,
                    int64_t k, double *c, double *ct) {
    for (int64_t a = 0; a < m; a++) {
        double *row = c + a * k, *col = ct + g[a] * m;
        for (int64_t i = starts[a]; i < starts[a + 1]; i++) {
            row[g[v[i]]] -= h[i];
            col[v[i]] -= h[i];
        }
    }
}

static int64_t find_root(int64_t *parent, int64_t i) {
    while (parent[i] != i) {
        parent[i] = parent[parent[i]]; /* path halving */
        i = parent[i];
    }
    return i;
}

/* Each player's connected group label, the smallest player index in its group, for the e edges
   u[k·step]–v[k·step] (every step-th pair): union–find, a group's root always its smallest index.
   label holds m entries on return (a player without an edge is its own group). */
void fit_components(int64_t e, const int64_t *u, const int64_t *v, int64_t step, int64_t m, int64_t *label) {
    for (int64_t i = 0; i < m; i++)
        label[i] = i;
    for (int64_t k = 0; k < e; k += step) {
        const int64_t a = find_root(label, u[k]), b = find_root(label, v[k]);
        if (a < b)
            label[b] = a;
        else if (b < a)
            label[a] = b;
    }
    for (int64_t i = 0; i < m; i++)
        label[i] = label[label[i]]; /* a parent's index is smaller: its label is final already */
}
