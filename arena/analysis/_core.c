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

static inline Entry *tt_find(uint64_t key) {
    uint32_t h = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - TT_BITS));
    for (;;) {
        Entry *e = &tt[h];
        if (e->gen != generation || e->key == key) return e;
        h = (h + 1) & (TT_SIZE - 1);
    }
}

static int after_lead(uint32_t a, uint32_t b, int lead, int alpha, int beta, const Rules *r);

/* The leader's future honours at a trick's start (fail-soft alpha-beta). */
static int value(uint32_t a, uint32_t b, int alpha, int beta, const Rules *r) {
    if (!a) return 0;
    uint64_t key = (uint64_t)a << 32 | b;
    Entry *e = tt_find(key);
    int total = hon(a | b);
    int lo = 0, hi = total;
    if (e->gen == generation) {
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
    if (e->gen != generation) { e->key = key; e->gen = generation; e->lo = (int8_t)lo; e->hi = (int8_t)hi; }
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

/* -- random playouts: whole deals (shuffle, deal, 16 tricks of random legal cards) --------------------- */
static inline uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random 32-bit words, two per SplitMix64 output. */
typedef struct {
    uint64_t state, spare;
    int has_spare;
} Rng;

static inline uint32_t next32(Rng *g) {
    if (g->has_spare) {
        g->has_spare = 0;
        return (uint32_t)g->spare;
    }
    uint64_t x = splitmix(&g->state);
    g->spare = x;
    g->has_spare = 1;
    return (uint32_t)(x >> 32);
}

/* Uniform in 0..n-1, up to a bias below n / 2**32. */
static inline uint32_t below(Rng *g, uint32_t n) { return (uint32_t)(((uint64_t)next32(g) * n) >> 32); }

#ifdef __BMI2__
#include <immintrin.h>
static inline int nth_card(uint32_t m, uint32_t k) { return low_card(_pdep_u32(1u << k, m)); }
#else
static inline int nth_card(uint32_t m, uint32_t k) {
    while (k--) m &= m - 1;
    return low_card(m);
}
#endif

/* Deal `deck` (top first) and play it out with random legal cards, as the engine would: packets of two,
 * non-dealer first; phase 1 free play, the winner draws first; the turned trump drawn last; phase 2
 * legal cards. Returns seat 0's honours; writes the 32 cards played to `plays` unless it is NULL. */
static int play_deal(const uint8_t *deck, int dealer, int hand_size, int trumps, int mh, Rng *s,
                     uint8_t *plays) {
    uint32_t hands[2] = {0, 0};
    int pos = 0;
    for (int p = 0; p < (hand_size + 1) / 2; p++) {
        int size = (2 * p + 2 <= hand_size) ? 2 : 1;
        for (int q = 0; q < size; q++) hands[1 - dealer] |= 1u << deck[pos++];
        for (int q = 0; q < size; q++) hands[dealer] |= 1u << deck[pos++];
    }
    uint8_t stock[32];
    int ns = 0, trump = -1;
    if (trumps) {
        trump = deck[pos] >> 3;
        for (int i = pos + 1; i < 32; i++) stock[ns++] = deck[i];
        stock[ns++] = deck[pos];
    } else {
        for (int i = pos; i < 32; i++) stock[ns++] = deck[i];
    }
    Rules r = {trump, mh};
    int leader = 1 - dealer, next = 0, h[2] = {0, 0};
    for (int trick = 0; trick < 16; trick++) {
        uint32_t la = hands[leader], fb = hands[1 - leader];
        int lead = nth_card(la, below(s, (uint32_t)__builtin_popcount(la)));
        uint32_t legal = next < ns ? fb : legal_follows(fb, lead, &r);
        int f = nth_card(legal, below(s, (uint32_t)__builtin_popcount(legal)));
        if (plays) { plays[2 * trick] = (uint8_t)lead; plays[2 * trick + 1] = (uint8_t)f; }
        hands[leader] = la ^ (1u << lead);
        hands[1 - leader] = fb ^ (1u << f);
        int winner = follower_wins(lead, f, trump) ? 1 - leader : leader;
        h[winner] += honc(lead) + honc(f);
        if (next < ns) {
            hands[winner] |= 1u << stock[next];
            hands[1 - winner] |= 1u << stock[next + 1];
            next += 2;
        }
        leader = winner;
    }
    return h[0];
}

/* Play `n` random deals of the given variant, each from a fresh Fisher-Yates shuffle; returns the
 * total of seat 0's honours (a checksum, so the work cannot be skipped). */
int64_t elf_playouts(uint64_t seed, int64_t n, int hand_size, int trumps, int mh) {
    Rng s = {seed, 0, 0};
    int64_t total = 0;
    uint8_t deck[32];
    for (int i = 0; i < 32; i++) deck[i] = (uint8_t)i;
    for (int64_t k = 0; k < n; k++) {
        for (int i = 31; i > 0; i--) {
            int j = (int)below(&s, (uint32_t)i + 1);
            uint8_t t = deck[i]; deck[i] = deck[j]; deck[j] = t;
        }
        total += play_deal(deck, (int)(k & 1), hand_size, trumps, mh, &s, NULL);
    }
    return total;
}

/* One random deal of a given pack, with the cards played: the engine replays it in the tests. */
int elf_playout_trace(const uint8_t *deck, int dealer, int hand_size, int trumps, int mh, uint64_t seed,
                      uint8_t *plays) {
    Rng s = {seed, 0, 0};
    return play_deal(deck, dealer, hand_size, trumps, mh, &s, plays);
}

int elf_version(void) { return 1; }
