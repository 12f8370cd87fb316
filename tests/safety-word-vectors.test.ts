// The pretrained word vectors of the lexical crisis classifier: the file format round-trips within
// the quantisation error, broken files are refused with what is wrong, and the shipped vectors
// carry meaning (the reason they are there).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_WORD_VECTORS, loadWordVectors } from '../src/safety/lexical.ts';
import { WordVectors } from '../src/safety/word-vectors.ts';
import { tempDir } from './support/core.ts';

function vectorOf(v: WordVectors, word: string): Float64Array | undefined {
  const sum = new Float64Array(v.dims);
  return v.accumulate(word, sum, new Float64Array(v.dims).fill(-Infinity)) ? sum : undefined;
}

const cosine = (a: Float64Array, b: Float64Array) => a.reduce((s, x, i) => s + x * b[i]!, 0) / Math.hypot(...a) / Math.hypot(...b);

describe('the word-vectors file', () => {
  const entries = [
    { word: 'pills', vector: [3, -4, 0, 0.5] },
    { word: 'río', vector: [0.001, 0.002, -0.003, 0] },
    { word: 'zero', vector: [0, 0, 0, 0] },
  ];

  it('round-trips words (any script) and unit vectors within the int8 quantisation error', () => {
    const file = path.join(tempDir(), 'v.bin');
    fs.writeFileSync(file, WordVectors.encode({ dims: 4, source: 'test' }, entries));
    const v = WordVectors.load(file);
    expect([v.size, v.dims]).toEqual([3, 4]);
    for (const { word, vector } of entries.slice(0, 2)) {
      const norm = Math.hypot(...vector);
      const got = vectorOf(v, word)!;
      vector.forEach((x, d) => expect(Math.abs(got[d]! - x / norm)).toBeLessThan(1 / 127));
    }
    expect(Array.from(vectorOf(v, 'zero')!)).toEqual([0, 0, 0, 0]);
    expect(vectorOf(v, 'unknown')).toBeUndefined();
  });

  it('pools: accumulate adds into the sum and keeps the element-wise max', () => {
    const file = path.join(tempDir(), 'v.bin');
    fs.writeFileSync(file, WordVectors.encode({ dims: 4, source: 'test' }, entries));
    const v = WordVectors.load(file);
    const sum = new Float64Array(4);
    const max = new Float64Array(4).fill(-Infinity);
    v.accumulate('pills', sum, max);
    v.accumulate('río', sum, max);
    const [a, b] = [vectorOf(v, 'pills')!, vectorOf(v, 'río')!];
    sum.forEach((x, d) => expect(x).toBeCloseTo(a[d]! + b[d]!, 12));
    max.forEach((x, d) => expect(x).toBe(Math.max(a[d]!, b[d]!)));
  });

  it('a broken file is refused with its path and what is wrong', () => {
    const dir = tempDir();
    const file = path.join(dir, 'v.bin');
    const good = WordVectors.encode({ dims: 4, source: 'test' }, entries);
    expect(() => WordVectors.load(file)).toThrow(new RegExp(`word vectors ${file}: cannot read it`));
    fs.writeFileSync(file, Buffer.from('not vectors at all'));
    expect(() => WordVectors.load(file)).toThrow(/bad magic/);
    fs.writeFileSync(file, good.subarray(0, good.length - 1));
    expect(() => WordVectors.load(file)).toThrow(/size is \d+ bytes, expected \d+ for 3 words of 4 dimensions/);
    fs.writeFileSync(file, Buffer.concat([good.subarray(0, 8), Buffer.from('{"format":')]));
    expect(() => WordVectors.load(file)).toThrow(/truncated header|header is not JSON/);
    expect(() => WordVectors.encode({ dims: 3, source: 'test' }, entries)).toThrow(/"pills" has 4 dimensions, expected 3/);
  });
});

describe('the shipped vectors', () => {
  const v = loadWordVectors(DEFAULT_WORD_VECTORS);

  it('hold the most frequent English words and are loaded once per process', () => {
    expect(v.size).toBeGreaterThanOrEqual(50_000);
    expect(v.dims).toBe(100);
    expect(loadWordVectors(DEFAULT_WORD_VECTORS)).toBe(v);
    for (const w of ['the', 'pills', 'bridge', 'goodbye']) expect(vectorOf(v, w), w).toBeDefined();
  });

  it('place related words closer than unrelated ones', () => {
    const cos = (a: string, b: string) => cosine(vectorOf(v, a)!, vectorOf(v, b)!);
    expect(cos('pills', 'tablets')).toBeGreaterThan(cos('pills', 'guitar'));
    expect(cos('poison', 'toxic')).toBeGreaterThan(cos('poison', 'holiday'));
    expect(cos('funeral', 'burial')).toBeGreaterThan(cos('funeral', 'spreadsheet'));
  });
});
