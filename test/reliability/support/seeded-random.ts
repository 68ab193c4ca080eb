/** A small seeded PRNG (mulberry32), so a failing run can be replayed with `RELIABILITY_SEED=<seed>`. */
export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  chance(probability: number): boolean;
  pick<ITEM>(items: readonly ITEM[]): ITEM;
  /** A lower-case alphanumeric word of `length` characters. */
  word(length: number): string;
}

export function seededRandom(seed = readSeed()): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    seed,
    next,
    int,
    between: (min, max) => min + int(max - min + 1),
    chance: (probability) => next() < probability,
    pick: (items) => items[int(items.length)]!,
    word: (length) => Array.from({ length }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[int(36)]).join(''),
  };
}

function readSeed(): number {
  const value = process.env.RELIABILITY_SEED;
  if (value !== undefined && value !== '') return Number(value) >>> 0;
  return Math.floor(Math.random() * 2 ** 32);
}
