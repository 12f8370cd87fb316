// Lexical similarity for the group reward and the simulated user: content words (stop words
// dropped, a light suffix stemmer so "feel"/"feeling"/"feels" meet), their bigrams, and the cosine
// of term-count vectors. Deterministic, dependency-free and fast enough to score every turn.

const STOP = new Set(
  `a about above after again against all am an and any are as at be because been before being below between both but by
  can could did do does doing down during each few for from further had has have having he her here hers herself him himself
  his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours
  ourselves out over own same she should so some such than that the their theirs them themselves then there these they this
  those through to too under until up very was we were what when where which while who whom why will with would you your
  yours yourself yourselves im ive id ill youre youve its thats theres lets dont doesnt didnt cant wont isnt wasnt arent
  also just really maybe bit much many one lot get got like well yes yeah oh ok okay s t`.split(/\s+/),
);

/** Lower-cased word tokens, apostrophes removed ("don't" -> "dont"). */
export function tokens(text: string): string[] {
  return (text.toLowerCase().replace(/[’']/g, '').match(/[a-z0-9]+/g) ?? []);
}

/** A crude suffix stemmer: enough to match inflections of the same word, never a real lemmatiser. */
export function stem(word: string): string {
  if (word.length <= 4) return word;
  for (const suffix of ['ingly', 'edly', 'ness', 'ment', 'ings', 'ing', 'ied', 'ies', 'ed', 'ly', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) {
      const base = word.slice(0, -suffix.length);
      return suffix === 'ied' || suffix === 'ies' ? `${base}y` : base;
    }
  }
  return word;
}

/** Stems of the content words of a text, in order. */
export function contentStems(text: string): string[] {
  return tokens(text)
    .filter((w) => !STOP.has(w) && w.length > 1)
    .map(stem);
}

export type TermVector = Map<string, number>;

/** Counts of content stems and of adjacent content-stem pairs (bigrams weigh as much as words). */
export function termVector(text: string): TermVector {
  const stems = contentStems(text);
  const v: TermVector = new Map();
  for (let i = 0; i < stems.length; i++) {
    v.set(stems[i]!, (v.get(stems[i]!) ?? 0) + 1);
    if (i > 0) {
      const bigram = `${stems[i - 1]} ${stems[i]}`;
      v.set(bigram, (v.get(bigram) ?? 0) + 1);
    }
  }
  return v;
}

/** cos(a, b) = sum_t a_t b_t / (|a| |b|); 0 when either is empty. */
export function cosine(a: TermVector, b: TermVector): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [t, x] of small) {
    const y = large.get(t);
    if (y !== undefined) dot += x * y;
  }
  if (dot === 0) return 0;
  let na = 0;
  let nb = 0;
  for (const x of a.values()) na += x * x;
  for (const y of b.values()) nb += y * y;
  return dot / Math.sqrt(na * nb);
}

/** Similarity of two texts in [0, 1]. */
export function similarity(a: string, b: string): number {
  return cosine(termVector(a), termVector(b));
}

/** Distinct content stems two texts share (single words only). */
export function sharedStems(a: string, b: string): number {
  const sa = new Set(contentStems(a));
  let n = 0;
  for (const s of new Set(contentStems(b))) if (sa.has(s)) n++;
  return n;
}

/** Word count, as people count words. */
export function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
