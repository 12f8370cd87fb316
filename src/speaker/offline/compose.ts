// Composes one turn of the offline voice from a recipe: an ordered list of parts (opener, body,
// closer...), each a bank of one-sentence templates. For each part it keeps the templates whose
// slots and conditions the message fills, drops any sentence the session has already seen or that
// echoes a recent bot turn, and draws one, favouring specific templates the session has not used.
//
// Template syntax: "[cond cond] text with {slot}". Conditions: `t:a|b` (one of these topics was
// mentioned), `f:a|b` (the first named feeling is of one of these families), `!slot` (slot empty),
// `?slot` (slot filled, for lines that refer to it without quoting it),
// `n:a|b` (none of these topics was mentioned),
// `+` (only for good news), `~` (fits good news too). A part that marks any line `+` or `~` is
// mood-aware: on good news its unmarked lines, written for hard moments, are left out.
// A template is usable only when every {slot} in it has a value.
import { sampleIndex, type Rng } from '../../util/rng.ts';

export interface Part {
  lines: readonly string[];
  /** Probability of including this part; omitted means the part is required. */
  chance?: number;
}
export type Recipe = readonly Part[];

export type Slots = Partial<Record<string, string>>;

export interface Cues {
  slots: Slots;
  topics: readonly string[];
  /** Family of the first named feeling, if any. */
  family?: string;
  /** The message was good news or thanks. */
  positive: boolean;
}

export interface Avoid {
  /** Normalised sentences already said in this session (and by earlier candidates of this request). */
  sentences: ReadonlySet<string>;
  /** Templates already used in this session: still allowed, but drawn less often. */
  templates: ReadonlySet<string>;
  /** Recent bot turns (any persona): no sentence may echo one of them. */
  recent: readonly string[];
}

export interface Composed {
  text: string;
  /** Normalised sentences, to remember. */
  sentences: string[];
  templates: string[];
}

/** Weight of a template already used in this session, relative to a fresh one. */
const REUSED_WEIGHT = 0.15;
/** Weight of a template that repeats a detail a recent bot turn already picked up. */
const ECHO_WEIGHT = 0.3;
/**
 * Share of content words in common with a recent bot sentence (|A ∩ B| / min(|A|, |B|)) from which
 * a sentence counts as an echo; sentences with fewer than two content words are never echoes.
 */
const ECHO_OVERLAP = 0.6;
const MAX_SENTENCES = 3;
/** Every voice asks at most one question per turn (Catalyst exactly one: its body is a question). */
const isQuestion = (sentence: string) => /\?["']?$/.test(sentence);

export function normaliseSentence(sentence: string): string {
  return sentence.toLowerCase().replace(/[^a-z0-9]+/g, ' ').trim();
}

/** Split a text into sentences the way a reader would (for memory and tests alike). */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const STOP = new Set('a an the and or but so to of in on at for with from by is are was were be been it its this that these those you your i me my we our they them he she his her what which who how when where why do does did not no yes if as just about than then there here have has had can could would should will may might one some any all more most very really'.split(' '));

function contentWords(text: string): Set<string> {
  return new Set(normaliseSentence(text).split(' ').filter((w) => w.length > 2 && !STOP.has(w)));
}

function overlap(a: Set<string>, b: Set<string>): number {
  if (a.size < 2 || b.size < 2) return 0;
  let inter = 0;
  for (const w of a) if (b.has(w)) inter++;
  return inter / Math.min(a.size, b.size);
}

interface Template {
  source: string;
  body: string;
  conditions: string[];
  slots: string[];
}

const parsed = new Map<string, Template>();
function parse(source: string): Template {
  let t = parsed.get(source);
  if (!t) {
    const m = /^\[([^\]]+)\]\s*/.exec(source);
    const body = m ? source.slice(m[0].length) : source;
    t = { source, body, conditions: m ? m[1]!.split(/\s+/) : [], slots: [...body.matchAll(/\{(\w+)\}/g)].map((s) => s[1]!) };
    parsed.set(source, t);
  }
  return t;
}

function holds(condition: string, cues: Cues): boolean {
  if (condition === '+') return cues.positive;
  if (condition === '~') return true;
  if (condition.startsWith('!')) return !cues.slots[condition.slice(1)];
  if (condition.startsWith('?')) return Boolean(cues.slots[condition.slice(1)]);
  if (condition.startsWith('n:')) return !condition.slice(2).split('|').some((t) => cues.topics.includes(t));
  if (condition.startsWith('t:')) return condition.slice(2).split('|').some((t) => cues.topics.includes(t));
  if (condition.startsWith('f:')) return cues.family !== undefined && condition.slice(2).split('|').includes(cues.family);
  throw new Error(`offline voice: unknown template condition "${condition}"`);
}

/**
 * Specific beats generic: each filled slot adds 3, a met feeling or good-news condition 2, a met
 * topic condition 4 / (1 + rank), rank being the topic's order of mention (the first is the main one).
 */
function specificity(t: Template, cues: Cues): number {
  let s = 3 * t.slots.length;
  for (const c of t.conditions) {
    if (c === '+' || c.startsWith('f:')) s += 2;
    if (c.startsWith('t:')) {
      const rank = Math.min(...c.slice(2).split('|').map((topic) => cues.topics.indexOf(topic)).filter((i) => i >= 0));
      s += 4 / (1 + rank);
    }
  }
  return s;
}

const moodAwareParts = new WeakMap<Part, boolean>();
function moodAware(part: Part): boolean {
  let aware = moodAwareParts.get(part);
  if (aware === undefined) {
    aware = part.lines.some((l) => parse(l).conditions.some((c) => c === '+' || c === '~'));
    moodAwareParts.set(part, aware);
  }
  return aware;
}

function render(t: Template, slots: Slots): string {
  let s = t.body.replace(/\{(\w+)\}/g, (_, k: string) => slots[k]!);
  s = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]["']?$/.test(s) ? s : `${s}.`;
}

interface Option {
  template: Template;
  sentence: string;
  key: string;
  weight: number;
}

function options(part: Part, cues: Cues, avoid: Avoid, recentWords: Set<string>[], recentText: string, taken: Set<string>, asked: boolean): Option[] {
  const out: Option[] = [];
  const hardOnly = cues.positive && moodAware(part);
  for (const source of part.lines) {
    const template = parse(source);
    if (!template.slots.every((k) => cues.slots[k]) || !template.conditions.every((c) => holds(c, cues))) continue;
    if (hardOnly && !template.conditions.some((c) => c === '+' || c === '~')) continue;
    const sentence = render(template, cues.slots);
    if (asked && isQuestion(sentence)) continue;
    const key = normaliseSentence(sentence);
    if (avoid.sentences.has(key) || taken.has(key) || taken.has(source)) continue;
    const words = contentWords(sentence);
    if (recentWords.some((r) => overlap(words, r) >= ECHO_OVERLAP)) continue;
    let weight = 1 + specificity(template, cues);
    if (avoid.templates.has(source)) weight *= REUSED_WEIGHT;
    if (template.slots.some((k) => (cues.slots[k]?.length ?? 0) >= 8 && recentText.includes(cues.slots[k]!.toLowerCase()))) weight *= ECHO_WEIGHT;
    out.push({ template, sentence, key, weight });
  }
  return out;
}

/** One turn from a recipe, or undefined when a required part has nothing fresh left to say. */
export function compose(recipe: Recipe, cues: Cues, avoid: Avoid, rng: Rng): Composed | undefined {
  const recentSentences = avoid.recent.flatMap(splitSentences);
  const recentWords = recentSentences.map(contentWords);
  const recentText = avoid.recent.join(' ').toLowerCase();
  const taken = new Set<string>();
  const chosen: Option[] = [];
  for (const part of recipe) {
    if (chosen.length >= MAX_SENTENCES) break;
    if (part.chance !== undefined && rng.next() >= part.chance) continue;
    const opts = options(part, cues, avoid, recentWords, recentText, taken, chosen.some((o) => isQuestion(o.sentence)));
    if (opts.length === 0) {
      if (part.chance === undefined) return undefined;
      continue;
    }
    const total = opts.reduce((s, o) => s + o.weight, 0);
    const pick = opts[sampleIndex(opts.map((o) => o.weight / total), rng)]!;
    chosen.push(pick);
    taken.add(pick.key).add(pick.template.source);
    recentWords.push(contentWords(pick.sentence)); // and no sentence echoes an earlier one of this turn
  }
  if (chosen.length === 0) return undefined;
  return { text: chosen.map((o) => o.sentence).join(' '), sentences: chosen.map((o) => o.key), templates: chosen.map((o) => o.template.source) };
}
