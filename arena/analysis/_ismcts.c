/* Single-observer ISMCTS in phase 1, included by _core.c after _playout.c (it uses its playouts).
 *
 * arena/analysis/ismcts.py is its pure-Python twin: the same random numbers (one SplitMix64 stream
 * from the seed), the same worlds, tree and playouts, hence the same visit counts and rewards
 * (tests/analysis/test_ismcts.py). About 4 us an iteration, against some 25 us for the same tree walk in
 * Python over compiled playouts.
 */
#include <math.h>
#include <stdlib.h>

typedef struct {
    int32_t child[32]; /* node index per card, -1 when not expanded */
    int32_t visits, avail;
    double reward; /* the sum of the honours / 20 its player ended with */
    int seat;      /* who played the card that leads here */
} TreeNode;

typedef struct {
    uint32_t hands[2];
    uint8_t stock[32];
    int ns, next, leader, table, h[2];
} SimWorld;

/* A legal card played in phase 1 (any card of the hand; the winner draws first). */
static void world_play(SimWorld *w, int c, int trump) {
    int mover = w->table < 0 ? w->leader : 1 - w->leader;
    w->hands[mover] &= ~(1u << c);
    if (w->table < 0) { w->table = c; return; }
    int winner = follower_wins(w->table, c, trump) ? mover : w->leader;
    w->h[winner] += honc(w->table) + honc(c);
    if (w->next < w->ns) {
        w->hands[winner] |= 1u << w->stock[w->next];
        w->hands[1 - winner] |= 1u << w->stock[w->next + 1];
        w->next += 2;
    }
    w->table = -1;
    w->leader = winner;
}

static uint64_t draw63(Rng *g) {
    uint64_t hi = next32(g);
    uint64_t lo = next32(g);
    return (hi << 32 | lo) >> 1;
}

static int new_node(TreeNode *nodes, int *count, int seat) {
    TreeNode *n = &nodes[*count];
    for (int c = 0; c < 32; c++) n->child[c] = -1;
    n->visits = 0;
    n->avail = 1;
    n->reward = 0.0;
    n->seat = seat;
    return (*count)++;
}

/* `iterations` of ISMCTS from a phase-1 position seen by `seat` (its hand `mine`, the `unknown` cards
 * dealt out anew each iteration: `opp_size` to the opponent, the rest to the stock in random order, then
 * `trump_card` last if it is >= 0), the tree `depth` cards deep at most. Writes each root card's visits
 * and reward sum; returns 0, or -1 when out of memory.
 * `peek` is for the strength bench only (no bot can know the hidden cards): 0 deals them out anew; with
 * `known`, the unknown cards in their true order (the opponent's hand, then the stock top first), 1 keeps
 * the opponent's hand and deals the stock anew, 2 keeps every card where it is. */
int elf_ismcts(uint32_t mine, uint32_t unknown, int seat, int opp_size, int trump_card, int leader, int table,
               int hon0, int hon1, int trump, int mh, int iterations, uint64_t seed, uint32_t eps32,
               double explore, int depth, const uint8_t *known, int peek, int32_t *visits, double *rewards) {
    TreeNode *nodes = malloc(sizeof(TreeNode) * (size_t)(iterations + 1));
    if (!nodes) return -1;
    Rng g = {seed, 0, 0};
    int count = 0;
    new_node(nodes, &count, 1 - seat);
    uint8_t hidden[32];
    int n = 0;
    for (uint32_t m = unknown; m; m &= m - 1) hidden[n++] = (uint8_t)low_card(m);
    if (peek)
        for (int i = 0; i < n; i++) hidden[i] = known[i];
    int path[40], fixed = peek == 2 ? n : peek == 1 ? opp_size : 0; /* the first `fixed` stay */
    for (int it = 0; it < iterations; it++) {
        for (int i = n - 1; i > fixed; i--) { /* Fisher-Yates over the rest, as the twin's */
            int j = fixed + (int)below(&g, (uint32_t)(i - fixed) + 1);
            uint8_t t = hidden[i]; hidden[i] = hidden[j]; hidden[j] = t;
        }
        SimWorld w;
        uint32_t opp = 0;
        for (int i = 0; i < opp_size; i++) opp |= 1u << hidden[i];
        w.ns = 0;
        for (int i = opp_size; i < n; i++) w.stock[w.ns++] = hidden[i];
        if (trump_card >= 0) w.stock[w.ns++] = (uint8_t)trump_card;
        w.hands[seat] = mine;
        w.hands[1 - seat] = opp;
        w.next = 0; w.leader = leader; w.table = table; w.h[0] = hon0; w.h[1] = hon1;
        int node = 0, plen = 1;
        path[0] = 0;
        while (w.next < w.ns && plen <= depth) {
            int mover = w.table < 0 ? w.leader : 1 - w.leader;
            uint32_t legal = w.hands[mover], untried = 0;
            for (uint32_t x = legal; x; x &= x - 1) {
                int c = low_card(x), ch = nodes[node].child[c];
                if (ch < 0) untried |= 1u << c;
                else nodes[ch].avail++;
            }
            if (untried) {
                int c = nth_card(untried, below(&g, (uint32_t)__builtin_popcount(untried)));
                int ch = new_node(nodes, &count, mover);
                nodes[node].child[c] = ch;
                world_play(&w, c, trump);
                path[plen++] = ch;
                break;
            }
            int best = -1;
            double top = -1.0;
            for (uint32_t x = legal; x; x &= x - 1) {
                const TreeNode *ch = &nodes[nodes[node].child[low_card(x)]];
                double v = ch->reward / ch->visits + explore * sqrt(log((double)ch->avail) / ch->visits);
                if (v > top) { top = v; best = low_card(x); }
            }
            node = nodes[node].child[best];
            world_play(&w, best, trump);
            path[plen++] = node;
        }
        uint64_t pseed = draw63(&g);
        int first = elf_greedy_playout(w.hands[0], w.hands[1], w.stock + w.next, w.ns - w.next, w.leader,
                                       w.table, w.h[0], w.h[1], trump, mh, pseed, eps32, 0);
        for (int i = 1; i < plen; i++) {
            TreeNode *p = &nodes[path[i]];
            p->visits++;
            p->reward += (double)(p->seat == 0 ? first : 20 - first) / 20.0;
        }
    }
    for (int c = 0; c < 32; c++) {
        int ch = nodes[0].child[c];
        visits[c] = ch < 0 ? 0 : nodes[ch].visits;
        rewards[c] = ch < 0 ? 0.0 : nodes[ch].reward;
    }
    free(nodes);
    return 0;
}
