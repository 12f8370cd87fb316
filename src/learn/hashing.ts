// Feature hashing: MurmurHash3 (x86, 32-bit) over UTF-8 bytes, and signed hashing of word
// uni/bi-grams into namespaces, the way Vowpal Wabbit and scikit-learn's HashingVectorizer do.
// Hashing bytes (not JS UTF-16 code units) keeps ids identical to those tools and across runtimes.

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3_x86_32 of `bytes[0, length)` with `seed`; unsigned 32-bit result. */
export function murmur3(bytes: Uint8Array, seed = 0, length = bytes.length): number {
  let h = seed >>> 0;
  const blocks = length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  // Tail: the last 1-3 bytes, little-endian.
  const tail = length & 3;
  if (tail > 0) {
    let k = bytes[blocks]!;
    if (tail > 1) k |= bytes[blocks + 1]! << 8;
    if (tail > 2) k |= bytes[blocks + 2]! << 16;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
  }
  h ^= length;
  // fmix32: final avalanche
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(256);

/** MurmurHash3_x86_32 of a string's UTF-8 bytes; unsigned 32-bit result. */
export function murmur3String(text: string, seed = 0): number {
  // A UTF-16 code unit becomes at most 3 UTF-8 bytes.
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(Math.max(text.length * 3, scratch.length * 2));
  const { written } = encoder.encodeInto(text, scratch);
  return murmur3(scratch, seed, written);
}

/** The same hash as scikit-learn's `murmurhash3_32(text, seed)` (signed int32). */
export function murmur3Signed(text: string, seed = 0): number {
  return murmur3String(text, seed) | 0;
}

/**
 * Lower-cased word tokens: letters, digits and in-word apostrophes, so "don't" stays one token.
 * Unicode-aware (\p{L}), matching what a person would call a word in any script.
 */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu) ?? [];
}

/** Word n-grams of orders 1..maxN, joined with a space ("not", "good", "not good"). */
export function wordNgrams(tokens: readonly string[], maxN = 2): string[] {
  const grams: string[] = [...tokens];
  for (let n = 2; n <= maxN; n++) for (let i = 0; i + n <= tokens.length; i++) grams.push(tokens.slice(i, i + n).join(' '));
  return grams;
}

/** Hashed features of one example: parallel arrays of bucket ids and signed weights. */
export interface HashedBag {
  ids: number[];
  weights: number[];
}

export interface FeatureHasherOptions {
  /** Number of buckets; a power of two keeps the index a bit mask as in Vowpal Wabbit. */
  buckets: number;
  /** Signed hashing (scikit-learn's alternate_sign): collisions cancel in expectation. */
  signed?: boolean;
}

/**
 * Hashes (namespace, feature) pairs into a fixed number of buckets. As in Vowpal Wabbit, the
 * namespace's own hash seeds the feature's hash, so "sad" in the human's turn and "sad" in a bot's
 * turn land in unrelated buckets:
 *   seed_ns = murmur3(ns, 0);  h = murmur3(feature, seed_ns)
 *   index = h mod buckets;     sign = +1 if bit 31 of h is 0 else -1
 * The sign bit is independent of the index bits for any power-of-two bucket count up to 2^31.
 */
export class FeatureHasher {
  readonly buckets: number;
  readonly signed: boolean;
  private readonly seeds = new Map<string, number>();

  constructor(options: FeatureHasherOptions) {
    if (!Number.isInteger(options.buckets) || options.buckets < 2 || options.buckets > 2 ** 31)
      throw new RangeError(`buckets must be an integer between 2 and 2^31 (got ${options.buckets})`);
    this.buckets = options.buckets;
    this.signed = options.signed ?? true;
  }

  namespaceSeed(namespace: string): number {
    let seed = this.seeds.get(namespace);
    if (seed === undefined) {
      seed = murmur3String(namespace, 0);
      this.seeds.set(namespace, seed);
    }
    return seed;
  }

  /** Bucket and sign of one feature in a namespace. */
  hash(namespace: string, feature: string): { index: number; sign: 1 | -1 } {
    const h = murmur3String(feature, this.namespaceSeed(namespace));
    return { index: h % this.buckets, sign: this.signed && h >>> 31 === 1 ? -1 : 1 };
  }

  /** Append one feature with a value to a bag. */
  add(bag: HashedBag, namespace: string, feature: string, value = 1): void {
    const { index, sign } = this.hash(namespace, feature);
    bag.ids.push(index);
    bag.weights.push(sign * value);
  }

  /**
   * Append the word uni/bi-grams of `text` under a namespace, each weighted 1/sqrt(count) so a
   * long message does not outweigh a short one (the bag's sum has bounded norm).
   */
  addText(bag: HashedBag, namespace: string, text: string, options: { maxN?: number; maxTokens?: number } = {}): void {
    let tokens = tokenize(text);
    // A very long message keeps its last words: that is where the question usually is.
    if (options.maxTokens !== undefined && tokens.length > options.maxTokens) tokens = tokens.slice(-options.maxTokens);
    const grams = wordNgrams(tokens, options.maxN ?? 2);
    if (grams.length === 0) return;
    const value = 1 / Math.sqrt(grams.length);
    for (const g of grams) this.add(bag, namespace, g, value);
  }
}
