// Features of a candidate turn for the persona reward model: what the turn says and how it
// relates to the conversation before it. Versioned: a model records REWARD_FEATURE_VERSION and
// its dense layout, and the loader refuses a model built for other features.
//
// Sparse part (embedding-bag input), signed hashed features (MurmurHash3 over UTF-8, see src/learn/hashing.ts):
//   r  word uni/bi-grams of the turn (its vocabulary and phrasing)
//   s  shape tokens: the first word of each sentence, the closing punctuation, a "Label:" opener,
//      counts of questions and sentences (how the persona builds a turn)
//   k  a constant feature, so every bag is non-empty
// Dense part (DENSE_NAMES, each roughly in [0, 1]): length, sentences, questions, exclamations,
// second- and first-person share, relevance to the human's last message, echo of earlier companion
// turns, parroting of the human, lexicon affect, numbers/dates, a label opener.
import { affectOf } from '../director/affect.ts';
import { cosine, sharedStems, termVector } from '../eval/text.ts';
import { FeatureHasher, tokenize, type HashedBag } from '../learn/hashing.ts';
import { lastHumanText, type ContextTurn } from './rubric.ts';

export const REWARD_FEATURE_VERSION = 'persona-reward-features/1';
export const DEFAULT_REWARD_BUCKETS = 1 << 13;

const TURN_TOKENS = 96;

export const DENSE_NAMES = [
  'length',
  'sentences',
  'questions',
  'exclamations',
  'second_person',
  'first_person',
  'relevance',
  'echo',
  'parrot',
  'affect',
  'numbers',
  'label_opener',
] as const;

export interface RewardFeatures {
  ids: Int32Array;
  weights: Float32Array;
  dense: Float32Array;
}

const SECOND = new Set(['you', 'your', "you're", 'yours', 'yourself', "you've", "you'd", "you'll"]);
const FIRST = new Set(['i', 'me', 'my', "i'm", 'mine', 'myself', "i've", "i'd", "i'll"]);

export class RewardFeaturizer {
  readonly denseNames: readonly string[] = DENSE_NAMES;
  private readonly hasher: FeatureHasher;

  constructor(readonly buckets: number = DEFAULT_REWARD_BUCKETS) {
    this.hasher = new FeatureHasher({ buckets });
  }

  features(context: readonly ContextTurn[], text: string): RewardFeatures {
    const bag: HashedBag = { ids: [], weights: [] };
    this.hasher.addText(bag, 'r', text, { maxTokens: TURN_TOKENS });
    const sentences = splitSentences(text);
    const shape: string[] = sentences.map((s) => `start:${tokenize(s)[0] ?? ''}`);
    const end = /[.?!…:)]$/.exec(text.trim())?.[0] ?? 'none';
    shape.push(`end:${end}`, `questions:${Math.min(count(text, '?'), 3)}`, `sentences:${Math.min(sentences.length, 5)}`);
    if (/^\s*[\p{L} ]{2,24}:/u.test(text)) shape.push(`label:${tokenize(text)[0]}`);
    for (const s of shape) this.hasher.add(bag, 's', s, 1 / Math.sqrt(shape.length));
    this.hasher.add(bag, 'k', 'bias');

    const words = tokenize(text);
    const n = Math.max(1, words.length);
    const human = lastHumanText(context);
    const v = termVector(text);
    let echo = 0;
    for (const t of context) if (t.isBot) echo = Math.max(echo, cosine(v, termVector(t.text)));
    const parrot = human ? Math.max(0, (cosine(v, termVector(human)) - 0.5) / 0.5) : 0;
    const dense = Float32Array.from([
      Math.log1p(words.length) / Math.log(100),
      Math.min(sentences.length, 6) / 3,
      Math.min(count(text, '?'), 3) / 3,
      Math.min(count(text, '!'), 3) / 3,
      Math.min(1, (5 * words.filter((w) => SECOND.has(w)).length) / n),
      Math.min(1, (5 * words.filter((w) => FIRST.has(w)).length) / n),
      human ? 1 - Math.exp(-sharedStems(human, text) / 1.5) : 0,
      echo,
      parrot,
      Math.tanh(affectOf(text).valence / 5),
      /\d/.test(text) ? 1 : 0,
      /^\s*[\p{L} ]{2,24}:/u.test(text) ? 1 : 0,
    ]);
    return { ids: Int32Array.from(bag.ids), weights: Float32Array.from(bag.weights), dense };
  }
}

function count(text: string, ch: string): number {
  let n = 0;
  for (const c of text) if (c === ch) n++;
  return n;
}

export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.?!…])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
