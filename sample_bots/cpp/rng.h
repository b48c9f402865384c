// A seeded random generator for the C++ sample bot: SplitMix64 (docs/shuffle.md §1), seeded with
// Welcome.bot_seed. Take every random choice from it and the same match seed (`arena play A B
// --seed N`) gives the same moves. std::random_device and the clock would not; the standard
// engines (std::mt19937_64) would, but std::uniform_int_distribution differs between compilers.
#pragma once

#include <cstdint>

namespace elfern {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed = 0) : state_(seed) {}

  uint64_t Next64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // A uniform integer in [0, n), n >= 1, without modulo bias: a word at or above 2^64 - (2^64 mod n)
  // is drawn again (the same rule as the Node sample's rng.js).
  uint64_t Below(uint64_t n) {
    const uint64_t rem = (0 - n) % n;  // 2^64 mod n, in 64-bit arithmetic
    for (;;) {
      const uint64_t word = Next64();
      if (rem == 0 || word < 0 - rem) return word % n;
    }
  }

 private:
  uint64_t state_;
};

}  // namespace elfern
