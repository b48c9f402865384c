/* The playouts of the compiled core, included by _core.c (it shares its helpers and the search).
 *
 * Random whole deals for `arena bench engine`, and noisy greedy playouts from a world for the search
 * bots (`arena.analysis.playout`, whose pure-Python twin draws the same random numbers and plays the
 * same cards: tests/analysis/test_playout_core.py).
 */

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

/* -- noisy greedy playouts from a world, then phase 2 solved exactly ------------------------------------ */
/* The cheapest card of `m`: blanks before honours, other suits before trumps, low before high; the
 * lowest card among equals (as Python's min over ascending cards). */
static int cheapest(uint32_t m, int trump) {
    int best = -1, cost = 1 << 30;
    for (; m; m &= m - 1) {
        int c = low_card(m);
        int k = honc(c) * 16 + ((c >> 3) == trump) * 8 + (c & 7);
        if (k < cost) { cost = k; best = c; }
    }
    return best;
}

/* The cards of `m` that some card of `other` would take if they were led. */
static uint32_t beaten_set(uint32_t m, uint32_t other, int trump) {
    uint32_t out = 0;
    for (uint32_t x = m; x; x &= x - 1) {
        int c = low_card(x);
        int by = (other & suit_of(c) & ~((2u << c) - 1)) != 0;
        if (!by && trump >= 0 && (c >> 3) != trump) by = (other & (0xFFu << (8 * trump))) != 0;
        if (by) out |= 1u << c;
    }
    return out;
}

/* sim.greedy (arena/analysis/playout.py), card for card. */
static int greedy_card(uint32_t legal, uint32_t other, int table, int trump) {
    if (table < 0) {
        uint32_t sure = legal & HONOURS & ~beaten_set(legal & HONOURS, other, trump);
        return cheapest(sure ? sure : legal, trump);
    }
    uint32_t winners = 0;
    for (uint32_t x = legal; x; x &= x - 1) {
        int c = low_card(x);
        if (follower_wins(table, c, trump)) winners |= 1u << c;
    }
    if (winners && honc(table)) return cheapest(winners, trump);
    uint32_t exposed = beaten_set(winners & HONOURS, other, trump);
    if (exposed) return cheapest(exposed, trump);
    uint32_t blanks = legal & ~HONOURS & ~winners;
    return cheapest(blanks ? blanks : winners ? winners : legal, trump);
}

/* Play a world on to the start of phase 2 (or the end of the deal) with noisy greedy cards for both
 * sides: before each card a 32-bit draw below `eps32` picks a uniformly random legal card instead (a
 * second draw). Then phase 2 is solved exactly. Returns `seat`'s honours at the end of the deal. */
int elf_greedy_playout(uint32_t h0, uint32_t h1, const uint8_t *stock, int ns, int leader, int table, int hon0,
                       int hon1, int trump, int mh, uint64_t seed, uint32_t eps32, int seat) {
    Rules r = {trump, mh};
    Rng g = {seed, 0, 0};
    uint32_t hands[2] = {h0, h1};
    int h[2] = {hon0, hon1}, next = 0;
    while (next < ns || table >= 0) {
        int mover = table < 0 ? leader : 1 - leader;
        uint32_t mine = hands[mover];
        if (!mine) break;
        uint32_t legal = (table < 0 || next < ns) ? mine : legal_follows(mine, table, &r);
        int c;
        if (next32(&g) < eps32)
            c = nth_card(legal, below(&g, (uint32_t)__builtin_popcount(legal)));
        else
            c = greedy_card(legal, hands[1 - mover], table, trump);
        hands[mover] = mine ^ (1u << c);
        if (table < 0) { table = c; continue; }
        int winner = follower_wins(table, c, trump) ? mover : leader;
        h[winner] += honc(table) + honc(c);
        if (next < ns) {
            hands[winner] |= 1u << stock[next];
            hands[1 - winner] |= 1u << stock[next + 1];
            next += 2;
        }
        table = -1;
        leader = winner;
    }
    uint32_t a = hands[leader], b = hands[1 - leader];
    if (!a) return h[seat];
    if (++generation == 0) { memset(tt, 0, sizeof tt); generation = 1; }
    int v = value(a, b, -INF, INF, &r); /* the leader's future honours */
    return h[seat] + (seat == leader ? v : hon(a | b) - v);
}

