// A seeded random generator: SplitMix64 (docs/shuffle.md §1), seeded with Welcome.bot_seed. Take
// every random choice from it and the same match seed (`arena play A B --seed N`) gives the same
// moves. Never use Math.random() or the clock: a replay would differ.

const MASK = (1n << 64n) - 1n;

export interface Rng {
  next64(): bigint;
  below(n: number): number;
  pick<T>(items: T[]): T;
}

export function seededRandom(seed: string | number): Rng {
  let state = BigInt(seed) & MASK;
  const next64 = (): bigint => {
    state = (state + 0x9e3779b97f4a7c15n) & MASK;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK;
    return z ^ (z >> 31n);
  };
  // A uniform integer in [0, n), without modulo bias (rejection, as below() in docs/shuffle.md).
  const below = (n: number): number => {
    const bound = BigInt(n);
    const limit = (1n << 64n) - ((1n << 64n) % bound);
    for (;;) {
      const word = next64();
      if (word < limit) return Number(word % bound);
    }
  };
  return { next64, below, pick: <T>(items: T[]): T => items[below(items.length)] };
}
