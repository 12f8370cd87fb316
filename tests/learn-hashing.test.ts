import { describe, expect, it } from 'vitest';
import { FeatureHasher, murmur3, murmur3Signed, murmur3String, tokenize, wordNgrams, type HashedBag } from '../src/learn/hashing.ts';

describe('MurmurHash3 x86_32', () => {
  // Vectors from the reference implementation (SMHasher MurmurHash3_x86_32) and scikit-learn's tests.
  it.each([
    ['', 0, 0],
    ['', 1, 0x514e28b7],
    ['', 0xffffffff, 0x81f16f39],
    ['a', 0x9747b28c, 0x7fa09ea6],
    ['aa', 0x9747b28c, 0x5d211726],
    ['aaa', 0x9747b28c, 0x283e0130],
    ['aaaa', 0x9747b28c, 0x5a97808a],
    ['ab', 0x9747b28c, 0x74875592],
    ['abc', 0x9747b28c, 0xc84a62dd],
    ['abcd', 0x9747b28c, 0xf0478627],
    ['Hello, world!', 0x9747b28c, 0x24884cba],
    ['The quick brown fox jumps over the lazy dog', 0x9747b28c, 0x2fa826cd],
    // Multi-byte UTF-8: hashing bytes, not UTF-16 code units.
    ['ππππππππ', 0x9747b28c, 0xd58063c1],
  ])('hash(%j, %i)', (text, seed, expected) => {
    expect(murmur3String(text, seed)).toBe(expected);
  });

  it('hashes four zero bytes like the reference', () => {
    expect(murmur3(new Uint8Array(4), 0)).toBe(0x2362f9de);
  });

  it('matches scikit-learn murmurhash3_32 (signed)', () => {
    expect(murmur3Signed('foo', 0)).toBe(-156908512);
    expect(murmur3Signed('foo', 42)).toBe(-1322301282);
    expect(murmur3String('foo', 0)).toBe(4138058784);
    expect(murmur3String('foo', 42)).toBe(2972666014);
  });

  it('handles strings longer than its scratch buffer', () => {
    const long = 'é'.repeat(1000);
    const bytes = new TextEncoder().encode(long);
    expect(murmur3String(long, 7)).toBe(murmur3(bytes, 7));
  });
});

describe('tokens and n-grams', () => {
  it('lower-cases words, keeps in-word apostrophes and non-Latin letters', () => {
    expect(tokenize("I DON'T know... Ça va? 日本 2x")).toEqual(["i", "don't", 'know', 'ça', 'va', '日本', '2x']);
  });
  it('builds uni- and bi-grams', () => {
    expect(wordNgrams(['not', 'so', 'good'])).toEqual(['not', 'so', 'good', 'not so', 'so good']);
  });
});

describe('FeatureHasher', () => {
  const hasher = new FeatureHasher({ buckets: 1 << 12 });

  it('puts the same word in different buckets per namespace', () => {
    const a = hasher.hash('human', 'sad');
    const b = hasher.hash('bots', 'sad');
    expect(a).not.toEqual(b);
    // Deterministic and derived from the namespace seed, as in Vowpal Wabbit.
    const h = murmur3String('sad', murmur3String('human', 0));
    expect(a.index).toBe(h % 4096);
    expect(a.sign).toBe(h >>> 31 ? -1 : 1);
  });

  it('gives both signs across features', () => {
    const signs = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((w) => hasher.hash('x', w).sign));
    expect(signs).toEqual(new Set([1, -1]));
  });

  it('weights text features to unit norm and caps long messages', () => {
    const bag: HashedBag = { ids: [], weights: [] };
    hasher.addText(bag, 'human', 'I feel so tired');
    expect(bag.ids).toHaveLength(4 + 3);
    const norm = Math.sqrt(bag.weights.reduce((s, w) => s + w * w, 0));
    expect(norm).toBeCloseTo(1, 12);
    const capped: HashedBag = { ids: [], weights: [] };
    hasher.addText(capped, 'human', 'word '.repeat(500), { maxTokens: 10 });
    expect(capped.ids).toHaveLength(10 + 9);
    const empty: HashedBag = { ids: [], weights: [] };
    hasher.addText(empty, 'human', '...');
    expect(empty.ids).toHaveLength(0);
  });

  it('rejects a bad bucket count', () => {
    expect(() => new FeatureHasher({ buckets: 1.5 })).toThrow(/buckets/);
  });
});
