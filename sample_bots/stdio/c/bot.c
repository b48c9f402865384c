/* Elfern Arena sample bot in plain C, speaking the stdio line protocol (docs/stdio.md).
 *
 * The arena speaks to it in JSON lines (docs/stdio.md): every referee message arrives on stdin as one JSON
 * object per line, and each "turn_request" line is answered with one line {"card":"XX"} on stdout.
 * No JSON library: the few fields it needs are found by name. Play is greedy: beat a led honour
 * with the cheapest card that does it, else throw the cheapest losing card; lead an ace if held,
 * else the lowest blank. Build: cc -O2 -o bot bot.c
 */
#include <stdio.h>
#include <string.h>

#define MAX_LINE 65536
#define MAX_CARDS 16

static int rank_of(const char *card) {
  const char *p = strchr("789TJQKA", card[0]);
  return p ? (int)(p - "789TJQKA") : -1;
}

static int is_honour(const char *card) { return rank_of(card) >= 3; }

/* Copy the string value of "key":"..." found in line into out (at most size-1 chars). */
static int string_field(const char *line, const char *key, char *out, size_t size) {
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
  const char *p = strstr(line, pattern);
  if (!p) return 0;
  p += strlen(pattern);
  size_t n = 0;
  while (p[n] && p[n] != '"' && n + 1 < size) n++;
  memcpy(out, p, n);
  out[n] = '\0';
  return 1;
}

/* Parse "legal_cards":["AS","7H",...] into cards; returns how many. */
static int legal_cards(const char *line, char cards[][3]) {
  const char *p = strstr(line, "\"legal_cards\":[");
  int n = 0;
  if (!p) return 0;
  p += strlen("\"legal_cards\":[");
  while (*p && *p != ']' && n < MAX_CARDS) {
    if (*p == '"' && p[1] && p[2] && p[3] == '"') {
      cards[n][0] = p[1];
      cards[n][1] = p[2];
      cards[n][2] = '\0';
      n++;
      p += 4;
    } else {
      p++;
    }
  }
  return n;
}

static int beats(const char *follow, const char *lead, char trump) {
  if (follow[1] == lead[1]) return rank_of(follow) > rank_of(lead);
  return trump && follow[1] == trump;
}

/* Lower cost = cheaper to give away: blanks before honours, then low before high. */
static int cost(const char *card) { return is_honour(card) * 8 + rank_of(card); }

/* Ties go to the lower card code ("7C" before "7H"), as in the Python greedy bot. */
static int cheaper(const char *a, const char *b) {
  return cost(a) != cost(b) ? cost(a) < cost(b) : strcmp(a, b) < 0;
}

static int lower(const char *a, const char *b) {
  return rank_of(a) != rank_of(b) ? rank_of(a) < rank_of(b) : strcmp(a, b) < 0;
}

static const char *choose(char cards[][3], int n, const char *lead, char trump) {
  int best = -1, i;
  if (!lead[0]) {
    for (i = 0; i < n; i++) /* an ace, the lowest code of them */
      if (cards[i][0] == 'A' && (best < 0 || strcmp(cards[i], cards[best]) < 0)) best = i;
    if (best >= 0) return cards[best];
    for (i = 0; i < n; i++)
      if (best < 0 || cheaper(cards[i], cards[best])) best = i;
    return cards[best];
  }
  if (is_honour(lead)) {
    for (i = 0; i < n; i++)
      if (beats(cards[i], lead, trump) && (best < 0 || lower(cards[i], cards[best]))) best = i;
    if (best >= 0) return cards[best];
  }
  for (i = 0; i < n; i++)
    if (!beats(cards[i], lead, trump) && (best < 0 || cheaper(cards[i], cards[best]))) best = i;
  if (best >= 0) return cards[best];
  for (i = 0; i < n; i++) /* only winners left: the lowest */
    if (best < 0 || lower(cards[i], cards[best])) best = i;
  return cards[best];
}

int main(void) {
  static char line[MAX_LINE];
  char cards[MAX_CARDS][3], lead[8], trump[8];
  while (fgets(line, sizeof line, stdin)) {
    if (!strstr(line, "\"type\":\"turn_request\"")) continue; /* nothing else needs an answer */
    int n = legal_cards(line, cards);
    if (n == 0) {
      fprintf(stderr, "no legal_cards in a turn_request line\n");
      return 1;
    }
    if (!string_field(line, "lead_card", lead, sizeof lead)) lead[0] = '\0';
    if (!string_field(line, "trump_suit", trump, sizeof trump)) trump[0] = '\0';
    printf("{\"card\":\"%s\"}\n", choose(cards, n, lead, trump[0]));
    fflush(stdout);
  }
  return 0;
}
