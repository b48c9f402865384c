// The C++ sample bot's play: greedy, from the legal cards and the card led only.
// Following: beat a led honour with the cheapest card that does it; otherwise throw the cheapest
// losing card (a low blank before any honour). Leading: an ace if held, else the lowest blank.
// Between equally cheap cards (one rank in two suits) it chooses with the generator seeded by
// Welcome.bot_seed (rng.h), so the same --seed replays the same cards.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "rng.h"

namespace elfern {

inline int Rank(const std::string& card) { return static_cast<int>(std::string("789TJQKA").find(card[0])); }
inline bool IsHonour(const std::string& card) { return Rank(card) >= 3; }  // T J Q K A

// Does `follow` take the trick against `lead`? A higher card of the suit led, or a trump.
inline bool Beats(const std::string& follow, const std::string& lead, const std::string& trump_suit) {
  if (follow[1] == lead[1]) return Rank(follow) > Rank(lead);
  return !trump_suit.empty() && follow[1] == trump_suit[0];
}

// Blanks before honours, low before high. Equally cheap cards are a free choice, made by `rng`
// (seeded from bot_seed): random, yet the same in a replay of the same seed.
inline std::string Cheapest(std::vector<std::string> cards, SplitMix64& rng) {
  auto cost = [](const std::string& c) { return (IsHonour(c) ? 8 : 0) + Rank(c); };
  std::sort(cards.begin(), cards.end(), [&](const std::string& a, const std::string& b) {
    return cost(a) != cost(b) ? cost(a) < cost(b) : a < b;
  });
  size_t tied = 1;
  while (tied < cards.size() && cost(cards[tied]) == cost(cards[0])) ++tied;
  return cards[rng.Below(tied)];
}

inline std::string LowestRank(std::vector<std::string> cards) {
  std::sort(cards.begin(), cards.end(), [](const std::string& a, const std::string& b) {
    return Rank(a) != Rank(b) ? Rank(a) < Rank(b) : a < b;
  });
  return cards.front();
}

// `legal` is never empty (the referee guarantees it).
inline std::string Choose(const std::vector<std::string>& legal, const std::string& lead,
                          const std::string& trump_suit, SplitMix64& rng) {
  if (lead.empty()) {
    std::vector<std::string> aces;
    for (const auto& c : legal) if (c[0] == 'A') aces.push_back(c);
    if (!aces.empty()) return *std::min_element(aces.begin(), aces.end());
    return Cheapest(legal, rng);
  }
  std::vector<std::string> winners, losers;
  for (const auto& c : legal) (Beats(c, lead, trump_suit) ? winners : losers).push_back(c);
  if (!winners.empty() && IsHonour(lead)) return LowestRank(winners);
  return losers.empty() ? LowestRank(winners) : Cheapest(losers, rng);
}

}  // namespace elfern
