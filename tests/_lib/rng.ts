// The one seeded random number generator of the tests (mulberry32), so that a seed replays the
// same entries, schedules and choices of operations, in this process or in a worker given it.

/** A seeded source of floats in [0, 1); equal seeds give equal sequences. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded source of random numbers, with the choices the nemesis harness makes. */
export class Rng {
  readonly #next: () => number;

  /** @param seed Any integer. */
  constructor(seed: number) {
    this.#next = mulberry32(seed);
  }

  /** A float in [0, 1). */
  next(): number {
    return this.#next();
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** One element of `items` (which must not be empty). */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** A shuffled copy of `items`. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }
}
