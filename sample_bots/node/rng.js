// A seeded random generator for the Node sample bot: SplitMix64 (docs/shuffle.md §1), seeded with
// Welcome.bot_seed. Take every random choice from it and the same match seed (`arena play A B
// --seed N`) gives the same moves. Never use Math.random() or the clock: a replay would differ.
'use strict';

const MASK = (1n << 64n) - 1n;

// `seed` is Welcome.bot_seed as proto-loader gives it with `longs: String` (a decimal string).
function seededRandom(seed) {
  let state = BigInt(seed) & MASK;
  function next64() {
    state = (state + 0x9E3779B97F4A7C15n) & MASK;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & MASK;
    return z ^ (z >> 31n);
  }
  // A uniform integer in [0, n), without modulo bias (rejection, as below() in docs/shuffle.md).
  function below(n) {
    const bound = BigInt(n);
    const limit = (1n << 64n) - ((1n << 64n) % bound);
    for (;;) {
      const word = next64();
      if (word < limit) return Number(word % bound);
    }
  }
  return { next64, below, pick: (items) => items[below(items.length)] };
}

module.exports = { seededRandom };
