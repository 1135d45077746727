/**
 * A small seeded pseudo-random generator (mulberry32), so that every random
 * choice of the fault disk and the crash harness replays from its seed.
 */

/** Draws integers from a 32-bit seed; the same seed gives the same sequence. */
export interface Random {
  /** A uniform integer in `[0, bound)`; `bound` must be a positive safe integer. */
  readonly below: (bound: number) => number;
}

/** A generator seeded with the low 32 bits of `seed`. */
export const makeRandom = (seed: number): Random => {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
  return { below: (bound) => Math.floor(next() * bound) };
};

/** Mixes several integers into one 32-bit seed (for per-cut-point seeds). */
export const mixSeed = (...parts: ReadonlyArray<number>): number => {
  let hash = 0x811c9dc5;
  for (const part of parts) {
    hash = Math.imul(hash ^ (part >>> 0), 0x01000193) >>> 0;
    hash = Math.imul(hash ^ Math.floor(part / 4_294_967_296), 0x01000193) >>> 0;
  }
  return hash;
};
