/* The compiled core of arena.analysis: the phase-2 search and random playouts, over 32-bit masks.
 *
 * Plain C with no Python headers, loaded with ctypes (arena/analysis/core.py) and built in place by
 * scripts/build_core.py. It implements exactly the search of pysolve.py (alpha-beta, transposition
 * table, move ordering, equivalent cards) and the plain minimax used as its brute-force check; the two
 * implementations must give identical answers (tests/analysis/test_core.py).
 *
 * Cards: suit * 8 + rank, rank 0 = 7 .. 7 = A, honours are ranks >= 3. `a` is the leader's hand, `b`
 * the follower's, `table` the card led or -1, `trump` a suit 0..3 or -1, `mh` must_head_phase2.
 */
#include <stdint.h>
#include <string.h>

#define HONOURS 0xF8F8F8F8u
#define INF 99

static inline int hon(uint32_t m) { return __builtin_popcount(m & HONOURS); }
static inline int honc(int c) { return (c & 7) >= 3; }
static inline uint32_t suit_of(int c) { return 0xFFu << (c & 24); }
static inline int low_card(uint32_t m) { return __builtin_ctz(m); }

typedef struct {
    int trump, mh;
} Rules;

/* The follower takes the trick: a higher card of the suit led, or a trump on a non-trump. */
static inline int follower_wins(int lead, int f, int trump) {
    if ((f >> 3) == (lead >> 3)) return f > lead;
    return trump >= 0 && (f >> 3) == trump;
}

static inline uint32_t legal_follows(uint32_t b, int lead, const Rules *r) {
    uint32_t same = b & suit_of(lead);
    if (same) {
        if (r->mh) {
            uint32_t higher = same & ~((2u << lead) - 1);
            if (higher) return higher;
        }
        return same;
    }
    if (r->trump >= 0) {
        uint32_t t = b & (0xFFu << (8 * r->trump));
        if (t) return t;
    }
    return b;
}

/* One card per run of equivalent cards (see pysolve.representatives). */
static uint32_t representatives(uint32_t cards, uint32_t live) {
    uint32_t out = 0, m = cards;
    while (m) {
        int c = low_card(m);
        m &= m - 1;
        uint32_t below = live & suit_of(c) & ((1u << c) - 1);
        if (below) {
            int prev = 31 - __builtin_clz(below);
            if ((cards >> prev & 1) && honc(prev) == honc(c)) continue;
        }
        out |= 1u << c;
    }
    return out;
}

/* -- transposition table: per thread, entries of the current search marked by a generation -------- */
#define TT_BITS 13
#define TT_SIZE (1u << TT_BITS)
typedef struct {
    uint64_t key;
    uint32_t gen;
    int8_t lo, hi;
} Entry;
static __thread Entry tt[TT_SIZE];
static __thread uint32_t generation;

#define TT_PROBES 32

/* The slot of `key`: its own entry, a free slot, or (a crowded table: 8-card hands have 12,870
 * positions) the last slot probed, which the caller then takes over. Use `tt_has` to tell. */
static inline Entry *tt_find(uint64_t key) {
    uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - TT_BITS));
    Entry *e = &tt[h];
    for (int i = 0; i < TT_PROBES; i++) {
        e = &tt[h];
        if (e->gen != generation || e->key == key) return e;
        h = (h + 1) & (TT_SIZE - 1);
    }
    return e;
}

static inline int tt_has(const Entry *e, uint64_t key) { return e->gen == generation && e->key == key; }

static int after_lead(uint32_t a, uint32_t b, int lead, int alpha, int beta, const Rules *r);

/* The leader's future honours at a trick's start (fail-soft alpha-beta). */
static int value(uint32_t a, uint32_t b, int alpha, int beta, const Rules *r) {
    if (!a) return 0;
    uint64_t key = (uint64_t)a << 32 | b;
    Entry *e = tt_find(key);
    int total = hon(a | b);
    int lo = 0, hi = total;
    if (tt_has(e, key)) {
        lo = e->lo;
        hi = e->hi;
    }
    if (lo >= beta || lo == hi) return lo;
    if (hi <= alpha) return hi;
    if (alpha < lo) alpha = lo;
    if (beta > hi) beta = hi;
    if (!(a & (a - 1))) {
        int v = follower_wins(low_card(a), low_card(b), r->trump) ? 0 : total;
        e = tt_find(key);
        e->key = key; e->gen = generation; e->lo = e->hi = (int8_t)v;
        return v;
    }
    int a0 = alpha, b0 = beta, best = -INF;
    uint32_t reps = representatives(a, a | b);
    /* good leads (nothing of the follower's beats them in suit) first, honours first; then the rest */
    uint32_t good = 0, m = reps;
    while (m) {
        int c = low_card(m);
        m &= m - 1;
        if (!(b & suit_of(c) & ~((2u << c) - 1))) good |= 1u << c;
    }
    uint32_t order[3] = {good & HONOURS, good & ~HONOURS, reps & ~good};
    for (int k = 0; k < 3 && alpha < beta; k++) {
        m = order[k];
        while (m) {
            int c = low_card(m);
            m &= m - 1;
            int v = after_lead(a ^ (1u << c), b, c, alpha, beta, r);
            if (v > best) {
                best = v;
                if (v > alpha) {
                    alpha = v;
                    if (alpha >= beta) break;
                }
            }
        }
    }
    e = tt_find(key);  /* the slot may have moved on: the search stored other entries */
    if (!tt_has(e, key)) { e->key = key; e->gen = generation; e->lo = (int8_t)lo; e->hi = (int8_t)hi; }
    if (best <= a0) { if (best < e->hi) e->hi = (int8_t)best; }
    else if (best >= b0) { if (best > e->lo) e->lo = (int8_t)best; }
    else { e->lo = e->hi = (int8_t)best; }
    return best;
}

/* The leader's future honours (this trick included) once `lead` is on the table. */
static int after_lead(uint32_t a, uint32_t b, int lead, int alpha, int beta, const Rules *r) {
    uint32_t legal = legal_follows(b, lead, r);
    uint32_t reps = representatives(legal, a | b | (1u << lead));
    uint32_t takers = 0, m = reps;
    while (m) {
        int f = low_card(m);
        m &= m - 1;
        if (follower_wins(lead, f, r->trump)) takers |= 1u << f;
    }
    uint32_t losers = reps & ~takers;
    /* cheapest taker first (non-honours, low), then cheapest loser */
    uint32_t order[4] = {takers & ~HONOURS, takers & HONOURS, losers & ~HONOURS, losers & HONOURS};
    int best = INF, lh = honc(lead);
    for (int k = 0; k < 4 && alpha < beta; k++) {
        m = order[k];
        while (m) {
            int f = low_card(m);
            m &= m - 1;
            uint32_t nb = b ^ (1u << f);
            int v;
            if (takers >> f & 1) {
                int rest = hon(a | nb);
                v = rest - value(nb, a, rest - beta, rest - alpha, r);
            } else {
                int pts = lh + honc(f);
                v = pts + value(a, nb, alpha - pts, beta - pts, r);
            }
            if (v < best) {
                best = v;
                if (v < beta) {
                    beta = v;
                    if (alpha >= beta) break;
                }
            }
        }
    }
    return best;
}

static void clear_out(int8_t *out) { memset(out, -1, 32); }

/* card -> the mover's future honours for every legal card (out[c] = -1 for the others). */
int elf_root_values(uint32_t a, uint32_t b, int table, int trump, int mh, int8_t *out) {
    Rules r = {trump, mh};
    clear_out(out);
    if (++generation == 0) { memset(tt, 0, sizeof tt); generation = 1; }
    if (table < 0) {
        uint32_t m = a;
        while (m) {
            int c = low_card(m);
            m &= m - 1;
            out[c] = (int8_t)after_lead(a ^ (1u << c), b, c, -INF, INF, &r);
        }
        return 0;
    }
    uint32_t m = legal_follows(b, table, &r);
    while (m) {
        int f = low_card(m);
        m &= m - 1;
        uint32_t nb = b ^ (1u << f);
        if (follower_wins(table, f, trump))
            out[f] = (int8_t)(honc(table) + honc(f) + value(nb, a, -INF, INF, &r));
        else
            out[f] = (int8_t)(hon(a | nb) - value(a, nb, -INF, INF, &r));
    }
    return 0;
}

/* -- the plain minimax: no pruning, no table --------------------------------------------------------- */
static int mm_after(uint32_t a, uint32_t b, int lead, const Rules *r);

static int mm_value(uint32_t a, uint32_t b, const Rules *r) {
    if (!a) return 0;
    int best = -1;
    for (uint32_t m = a; m; m &= m - 1) {
        int c = low_card(m);
        int v = mm_after(a ^ (1u << c), b, c, r);
        if (v > best) best = v;
    }
    return best;
}

static int mm_after(uint32_t a, uint32_t b, int lead, const Rules *r) {
    int best = INF;
    for (uint32_t m = legal_follows(b, lead, r); m; m &= m - 1) {
        int f = low_card(m);
        uint32_t nb = b ^ (1u << f);
        int v = follower_wins(lead, f, r->trump) ? hon(a | nb) - mm_value(nb, a, r)
                                                 : honc(lead) + honc(f) + mm_value(a, nb, r);
        if (v < best) best = v;
    }
    return best;
}

int elf_minimax_values(uint32_t a, uint32_t b, int table, int trump, int mh, int8_t *out) {
    Rules r = {trump, mh};
    clear_out(out);
    if (table < 0) {
        for (uint32_t m = a; m; m &= m - 1) {
            int c = low_card(m);
            out[c] = (int8_t)mm_after(a ^ (1u << c), b, c, &r);
        }
        return 0;
    }
    for (uint32_t m = legal_follows(b, table, &r); m; m &= m - 1) {
        int f = low_card(m);
        uint32_t nb = b ^ (1u << f);
        out[f] = (int8_t)(follower_wins(table, f, trump) ? honc(table) + honc(f) + mm_value(nb, a, &r)
                                                         : hon(a | nb) - mm_value(a, nb, &r));
    }
    return 0;
}

#include "_playout.c" /* playouts: random whole deals, noisy greedy ones from a world */
#include "_ismcts.c"  /* the ISMCTS of phase 1 over those playouts */

int elf_version(void) { return 1; }
