// Seeded pseudo-random numbers (mulberry32) so offline runs reproduce bit for bit.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
}

export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  return {
    next() {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** A stable 32-bit seed from a string (FNV-1a), e.g. to derive a per-session seed. */
export function seedFrom(...parts: (string | number)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join('\u241f')) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Index drawn from a discrete distribution. */
export function sampleIndex(probabilities: readonly number[], rng: Rng): number {
  const u = rng.next();
  let acc = 0;
  let last = 0;
  for (let i = 0; i < probabilities.length; i++) {
    const p = probabilities[i]!;
    if (p <= 0) continue;
    acc += p;
    last = i;
    if (u < acc) return i;
  }
  return last;
}
