// How the offline voice reads the human's last message: the feelings they named, what happened
// (with pronouns turned toward them: "I moved abroad" -> "you moved abroad"), the people in it
// ("my husband" -> "your husband"), its topics, and in meetings the names, proposals, decisions,
// tasks and dates. Plain pattern matching: it never claims to understand more than it found.
import {
  ABSOLUTES,
  FEELINGS,
  INTENSIFIERS,
  IRREGULAR_PAST,
  MONTHS,
  NOT_NAMES,
  RELATION_MODIFIERS,
  RELATIONS,
  TOPICS,
  WEEKDAYS,
  type FeelingFamily,
  type PersonKind,
} from './lexicon.ts';

export interface Feeling {
  /** As used after "feel": "alone", "left out", "really low". */
  adj: string;
  /** With the person's own intensifier: "so alone". */
  said: string;
  noun: string;
  family: FeelingFamily;
}

export interface Person {
  /** Turned toward the listener: "your husband". */
  phrase: string;
  kind: PersonKind;
}

export interface Task {
  /** Who owns it (a name; the speaker's own name for "I'll ..."), when one was said. */
  owner?: string;
  /** Verb phrase: "write up the migration plan". */
  action: string;
  /** "by Friday", "before the review", "tomorrow". */
  due?: string;
}

export interface Reading {
  feelings: Feeling[];
  /** Good news or thanks, with nothing hard named: the hard-moment phrasing would not fit. */
  positive: boolean;
  /** Things that happened, past tense, as clauses about the listener: "you moved abroad". */
  events: string[];
  /** Ongoing circumstances: "your husband travels for work". */
  circumstances: string[];
  people: Person[];
  topics: string[];
  /** Sweeping words the person used: "always", "nobody". */
  absolutes: string[];
  /** A harsh judgement of themselves, in their own words: "I should be over it by now". */
  selfJudgement?: string;
  // Meeting cues.
  names: string[];
  proposals: string[];
  decisions: string[];
  tasks: Task[];
  dates: string[];
  /** An open question someone asked, in their words. */
  question?: string;
}

const wordRe = (words: readonly string[]) => new RegExp(`\\b(?:${words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '\\s+')).join('|')})\\b`, 'gi');
// Compiled once: the reader runs on every turn of every channel.
const FEELING_RES = FEELINGS.map((entry) => ({ entry, re: wordRe(entry.words) }));
const INTENSIFIER_RES = INTENSIFIERS.map((i) => ({ word: i, re: new RegExp(`\\b${i}\\s+$`, 'i') }));
const TOPIC_RES = Object.entries(TOPICS).map(([topic, entry]) => ({ topic, re: new RegExp(`\\b(?:${entry.pattern})\\b`, 'i') }));
const ABSOLUTE_RES = ABSOLUTES.map((a) => ({ word: a, re: new RegExp(`\\b${a}\\b`, 'i') }));

/** Normalise typing habits we rely on: curly quotes, "i" for "I", repeated spaces. */
function normalise(text: string): string {
  return text
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\bi(?=\b|')/g, 'I')
    .replace(/\bim\b/gi, "I'm")
    .replace(/\bive\b/gi, "I've")
    .replace(/\s+/g, ' ')
    .trim();
}

/** Feeling words that also have everyday meanings ("I lost my keys"): only count them after a feeling cue. */
const AMBIGUOUS = new Set(['down', 'low', 'blue', 'lost', 'empty', 'flat', 'hurt', 'buried', 'drowning', 'crushed', 'cut off', 'forgotten', 'not good', 'stuck', 'trapped', 'ignored', 'rejected', 'abandoned', 'happy', 'proud', 'stupid']);
const FEELING_CUE = /\b(?:feel|feels|feeling|felt|I'm|am|been|get|getting|got|become|seem|seems|so|really|very|too|just)\s+(?:\w+\s+){0,2}$/i;
const NEGATION = /\b(?:not|never|no longer|n't)\s+(?:\w+\s+)?$|n't\s+(?:\w+\s+)?$/i;
/** "you guys are useless", "this is so stupid": the word describes someone or something else. */
const OTHER_SUBJECT = /\b(?:you|you guys|you all|they|he|she|it|this|that|everyone|people)\s+(?:\w+\s+)?(?:are|is|was|were|seem|seems|look|looks|sound|sounds)\s+(?:\w+\s+)?$/i;

function readFeelings(text: string): Feeling[] {
  const found: { at: number; feeling: Feeling }[] = [];
  for (const { entry, re } of FEELING_RES) {
    for (const m of text.matchAll(re)) {
      const word = m[0].toLowerCase().replace(/\s+/g, ' ');
      const before = text.slice(Math.max(0, m.index - 40), m.index);
      if (AMBIGUOUS.has(word) && !FEELING_CUE.test(before)) continue;
      if (!word.startsWith('not ') && NEGATION.test(before)) continue;
      if (OTHER_SUBJECT.test(before)) continue;
      const intensifier = INTENSIFIER_RES.find((i) => i.re.test(before))?.word;
      const adj = entry.adj ?? word;
      found.push({ at: m.index, feeling: { adj, said: intensifier && !entry.adj ? `${intensifier} ${adj}` : adj, noun: entry.noun, family: entry.family } });
    }
  }
  found.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  return found.map((f) => f.feeling).filter((f) => (seen.has(f.noun) ? false : (seen.add(f.noun), true)));
}

const RELATION_WORDS = Object.entries(RELATIONS).flatMap(([kind, words]) => words.map((w) => ({ word: w, kind: kind as PersonKind })));
const PERSON_RE = new RegExp(
  `\\b(?:my|our)\\s+((?:(?:${RELATION_MODIFIERS.join('|')})[- ]?)?(?:${RELATION_WORDS.map((r) => r.word)
    .sort((a, b) => b.length - a.length)
    .join('|')}))\\b`,
  'gi',
);

function readPeople(text: string): Person[] {
  const people: Person[] = [];
  for (const m of text.matchAll(PERSON_RE)) {
    const phrase = m[1]!.toLowerCase();
    const head = RELATION_WORDS.find((r) => phrase === r.word || phrase.endsWith(` ${r.word}`) || phrase.endsWith(`-${r.word}`));
    if (!people.some((p) => p.phrase === `your ${phrase}`)) people.push({ phrase: `your ${phrase}`, kind: head?.kind ?? 'other' });
  }
  return people;
}

/** First person turned toward the listener. Verbs need no change except "to be". */
const FLIP: Record<string, string> = {
  i: 'you', me: 'you', my: 'your', mine: 'yours', myself: 'yourself', "i'm": "you're", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
  we: 'you', us: 'you', our: 'your', ours: 'yours', ourselves: 'yourselves', "we're": "you're", "we've": "you've", "we'll": "you'll", "we'd": "you'd",
};

function flipPronouns(clause: string): string {
  return clause
    .split(' ')
    .map((w) => {
      const m = /^([\w']+)(.*)$/.exec(w);
      if (!m) return w;
      const to = FLIP[m[1]!.toLowerCase()];
      return to ? to + m[2] : w;
    })
    .join(' ')
    .replace(/\byou am\b/gi, 'you are')
    .replace(/\byou was\b/gi, 'you were')
    .replace(/\byou wasn't\b/gi, "you weren't");
}

const CONNECTIVES = /\s*(?:[,;:.!?]+|\b(?:and|but|so|because|cause|since|as|when|while|although|though|after|now that|ever since|until|whenever|plus|which|whereas)\b)\s*/i;
const LEADING_FILLER = /^(?:(?:and|but|so|also|just|honestly|actually|like|um|well|basically|anyway|then|now|lately|recently|still|really|ok|okay|sometimes|often|maybe|perhaps|I think(?: that)?|I guess|I believe|I suppose|I mean|I know(?: that)?|I feel like)\s+)+/i;
const TIME_LEAD = String.raw`(?:(?:last|this|a few|two|three|six|several)\s+(?:weeks?|months?|years?|days?)(?:\s+ago)?|yesterday|today|tonight|this morning|a (?:week|month|year) ago)\s+`;
const TIME_LEAD_RE = new RegExp(`^${TIME_LEAD}`, 'i');
const SUBJECT = new RegExp(`^(?:${TIME_LEAD})?(?:I|I_and_my_[\\w-]+|I'm|I've|I'd|I'll|we|we're|we've|my\\s+[\\w-]+(?:\\s+[\\w-]+)?|our\\s+[\\w-]+|nobody|no one|everyone|everybody|people|he|she|they)\\s+\\S`, 'i');
const FEELING_CLAUSE = /^(?:I|we)(?:'m|'ve| am| have| just| still| really)*(?:\s+been)?\s+(?:feel|feeling|felt)\b/i;
const QUESTION_START = /^(?:what|why|how|when|where|who|which|do|does|did|can|could|should|would|is|are|am)\b/i;
const BARE = new Set(["I don't know", "I guess", 'I mean', 'I think', "I'm fine", "I'm okay", 'I know']);

const SELF_JUDGEMENT = /\b(I (?:should(?:n't)?|shouldn't have|must be|always|never|can't do anything)\b[^.,;!?]*|I(?:'m| am) (?:just |so |such |really |too )?(?:a failure|useless|worthless|stupid|pathetic|weak|a mess|too much|not good enough|a burden|an idiot|bad at|terrible at|awful at|hopeless at|no good at|ugly|boring|unlovable|broken|annoying|lazy|dumb|a loser)[^.,;!?]*|(?:everyone|everybody|nobody|no one) (?:\w+ ){0,3}(?:me|I)\b[^.,;!?]*)/i;

const PRONOUN = /^(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|us|our|I_and_my_[\w-]+)[,.]?$/i;
const NOT_PAST_ED = new Set(['need', 'feed', 'bleed', 'breed', 'exceed', 'proceed', 'succeed', 'speed', 'seed', 'heed', 'shed', 'wed', 'embed']);

/** Past events read as "since ___"; ongoing circumstances as "while ___". */
function isPast(clause: string): boolean {
  const words = clause.replace(TIME_LEAD_RE, '').split(' ');
  // Skip the subject ("I", "my sister", "my older sister") to reach the verb.
  let i = /^(?:my|our)$/i.test(words[0] ?? '') ? (RELATION_MODIFIERS.includes((words[1] ?? '').toLowerCase()) ? 3 : 2) : 1;
  if (/^(?:I've|we've)$/i.test(words[0] ?? '')) return true;
  if (/^(?:have|has|had)$/i.test(words[i] ?? '')) return true;
  if (/(?:'m|'re|'s)$/i.test(words[0] ?? '') || /^(?:am|is|are)$/i.test(words[i] ?? '')) return false; // "I'm tired": a state, not an event
  while (i < words.length && /^(?:just|finally|recently|already|also|never|really|suddenly)$/i.test(words[i]!)) i++;
  const verb = (words[i] ?? '').toLowerCase();
  return (/[a-z]{2,}ed$/.test(verb) && !NOT_PAST_ED.has(verb)) || IRREGULAR_PAST.has(verb);
}

function readSituations(text: string): { events: string[]; circumstances: string[] } {
  const events: string[] = [];
  const circumstances: string[] = [];
  // Keep "my husband and I" together as one subject before splitting on "and": "you and your husband".
  const joined = text.replace(/\b(?:my|our)\s+([\w-]+)\s+and\s+I\b/gi, 'I_and_my_$1');
  for (const sentence of joined.split(/(?<=[.!?])\s+|\n+/)) {
    if (/\?\s*$/.test(sentence)) continue;
    for (let part of sentence.split(CONNECTIVES)) {
      part = part.replace(/^[A-Z][a-z]+:\s*/, '').replace(LEADING_FILLER, '').replace(/["()[\]*]/g, '').trim();
      const words = part.split(' ').length;
      if (words < 3 || words > 16 || !SUBJECT.test(part) || QUESTION_START.test(part) || BARE.has(part)) continue;
      // A feeling ("I'm so scared this ...") is not a situation; "I'm tired of pretending ..." is.
      if (FEELING_CLAUSE.test(part) || (/^(?:I'm|I am|I've been|we're)\b/i.test(part) && readFeelings(part).length > 0 && !/\bof\b/i.test(part))) continue;
      if (SELF_JUDGEMENT.test(part)) continue; // Catalyst works with these in the person's own words
      if (/\byou\b/i.test(part)) continue; // addressed to the companions, not about them
      if (part.split(' ').filter((w) => !PRONOUN.test(w)).length < 2) continue; // "I, I, my my": nothing to say back
      const clause = flipPronouns(part.replace(/\bI_and_my_([\w-]+)/g, 'I and my $1'));
      const lowered = /^(?:you|your|yours|yesterday|today|tonight|last|this|a|two|three|six|several)\b/i.test(clause) ? clause[0]!.toLowerCase() + clause.slice(1) : clause;
      (isPast(part) ? events : circumstances).push(lowered);
    }
  }
  return { events, circumstances };
}

function readTopics(text: string): string[] {
  const hits: { topic: string; at: number }[] = [];
  for (const { topic, re } of TOPIC_RES) {
    const m = re.exec(text);
    if (m) hits.push({ topic, at: m.index });
  }
  return hits.sort((a, b) => a.at - b.at).map((h) => h.topic);
}

// ---- meeting cues ----

const DUE_RE = new RegExp(
  String.raw`\b(?:(?:by|before|on|until|due|no later than)\s+(?:the\s+)?(?:end of (?:the )?(?:day|week|month|sprint|quarter)|eod|eow|next \w+|tomorrow|tonight|today|this \w+|(?:${WEEKDAYS.join('|')})(?:'s)?(?:\s+(?:review|meeting|standup|sync|demo))?|(?:${MONTHS.join('|')})\s+\d{1,2}(?:st|nd|rd|th)?|the \d{1,2}(?:st|nd|rd|th)|q[1-4])|tomorrow|tonight|next week|this week|end of (?:the )?(?:day|week|month|sprint))\b`,
  'i',
);

const DUE_ALL_RE = new RegExp(DUE_RE.source, 'gi');

const CLIP = /\s*(?:[,;:.!?\n]|\b(?:because|since|so that|but|although|though|unless)\b).*$/i;
const SOFTENERS = /^(?:just|really|probably|maybe|definitely|also|actually|honestly|simply)\s+/i;

/** A verb phrase cut at the first clause boundary, without softeners; undefined if empty or too long. */
function phrase(raw: string | undefined, maxWords = 14): string | undefined {
  if (!raw) return undefined;
  let p = raw.replace(CLIP, '').replace(/["*_]/g, '').trim();
  while (SOFTENERS.test(p)) p = p.replace(SOFTENERS, '');
  p = p.replace(/\s+(?:or not|instead|then|too|as well)$/i, '');
  const words = p.split(' ').filter(Boolean).length;
  return words === 0 || words > maxWords ? undefined : p;
}

const PROPOSAL_RES = [
  /\bwe\s+(?:should|could|might|need to|have to|must|ought to|can)\s+(.+)/i,
  /\bmaybe we\s+(?:should\s+)?(.+)/i,
  /\bhow about we\s+(.+)/i,
  /\bI (?:propose|suggest|vote)(?: that)? we\s+(.+)/i,
  /\b(?:should|can|could) we\s+(.+)/i,
  /\bwhat if we\s+(?!\w+ed\b)(.+)/i,
  /\blet'?s\s+(.+)/i,
];

/** "Let's talk about it" and "let's wrap up" move the meeting along; they are not proposals. */
const NOT_PROPOSALS = /^(?:discuss|talk|think|see|chat|wrap(?: this| it)? up|move on|continue|start|begin|get started|take a break|get back|go back|circle back|look at|review)\b/i;

const DECISION_RES: [RegExp, (m: RegExpExecArray) => string][] = [
  [/\bwe(?:'ve| have)?\s+(?:all\s+)?(?:decided|agreed)\s+to\s+(.+)/i, (m) => m[1]!],
  [/\b(?:decided|agreed|settled)\s+(?:on|that)\s+(.+)/i, (m) => m[1]!],
  [/\blet'?s\s+((?:go|stick)\s+with\s+.+)/i, (m) => m[1]!],
  [/\bwe(?:'ll| will|'re going to| are going to)\s+((?:go|stick)\s+with\s+.+)/i, (m) => m[1]!],
  [/\bwe(?:'re| are)?\s+go(?:ing)?\s+with\s+(.+)/i, (m) => `go with ${m[1]}`],
  [/\bdecision\s*(?:is|was|:)\s*(?:to\s+)?(.+)/i, (m) => m[1]!],
];

const OWNER_TASK = /\b(I|[A-Z][a-z]+)\s*(?:'ll|\s+will|\s+is going to|\s+am going to|'m going to|\s+can(?!')|\s+could(?!'))\s+(.+)/;
const ASK_TASK = /\b[Cc]an\s+([A-Z][a-z]+)\s+(.+?)\?/;
const UNOWNED_TASK = /\b(?:(?:someone|somebody|anyone)\s+(?:should|needs? to|has to|must|could)|we need someone to|who can)\s+(.+)/i;

function readTasks(text: string, speaker: string): Task[] {
  const tasks: Task[] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+|\n+/)) {
    let owned = OWNER_TASK.exec(sentence) ?? ASK_TASK.exec(sentence);
    if (owned && owned[1] !== 'I' && NOT_NAMES.has(owned[1]!)) owned = null; // "Who can ...", "Monday will ..."
    const unowned = owned ? undefined : UNOWNED_TASK.exec(sentence);
    const m = owned ?? unowned;
    if (!m) continue;
    let raw = (owned ? m[2] : m[1])!;
    const due = DUE_RE.exec(raw)?.[0];
    if (due) raw = raw.replace(due, ' ').replace(/\s+/g, ' ');
    let owner = owned ? m[1]! : undefined;
    if (owner === 'I') {
      owner = speaker;
      raw = raw.replace(/\bmy\b/gi, 'their').replace(/\bmyself\b/gi, 'themselves');
    }
    const action = phrase(raw.replace(/^(?:the task to|care of)\s+/i, ''));
    if (action) tasks.push({ owner, action, due: due ?? DUE_RE.exec(sentence)?.[0] });
  }
  return tasks;
}

function readNames(text: string, tasks: Task[], speaker: string): string[] {
  const names = new Set<string>();
  const add = (n: string | undefined) => {
    if (n && /^[A-Z][a-z]+$/.test(n) && !NOT_NAMES.has(n) && n !== speaker) names.add(n);
  };
  for (const m of text.matchAll(/(?:^|\n|[.!?]\s+)([A-Z][a-z]+):/g)) add(m[1]);
  for (const m of text.matchAll(/@([A-Z][a-z]+)\b/g)) add(m[1]);
  for (const m of text.matchAll(/\b(?:ask|thanks|thank you|cc|with|from)\s+([A-Z][a-z]+)\b/g)) add(m[1]);
  for (const m of text.matchAll(/\b([A-Z][a-z]+)\s+(?:thinks|said|says|mentioned|suggested|proposed|wants|agrees|disagrees)\b/g)) add(m[1]);
  for (const t of tasks) add(t.owner);
  return [...names];
}

const POSITIVE_WORDS = /\b(?:good|great|amazing|better|helped|helps|happy|glad|proud|nice|lovely|excited|thanks|thank you|awesome|wonderful|fun|enjoyed|relieved|grateful|dream|got into|got accepted|got the job|got promoted|passed(?! away)|engaged|made it|did it)\b/i;
const NEGATIVE_WORDS = /\b(?:not|no|never|but|until|except|anymore|bad|worse|worst|hard|awful|terrible|hate|miss|died|lost|away)\b|n't\b/i;
/** Topics that make a message hard news whatever else it says. */
const HARD_TOPICS = new Set(['loneliness', 'breakup', 'grief', 'health', 'money', 'conflict', 'stress', 'jobloss', 'complaint']);

function isPositive(text: string, feelings: Feeling[], topics: string[]): boolean {
  if (feelings.some((f) => f.family !== 'positive') || topics.some((t) => HARD_TOPICS.has(t))) return false;
  return feelings.length > 0 || (POSITIVE_WORDS.test(text) && !NEGATIVE_WORDS.test(text));
}

/** Read one message. `speaker` is the human's display name (owner of "I'll ..."). */
export function readMessage(raw: string, speaker: string): Reading {
  const text = normalise(raw);
  const { events, circumstances } = readSituations(text);
  const tasks = readTasks(text, speaker);
  // Sweeping words and harsh verdicts about the person themselves, not about the companions ("you never listen").
  const aboutSelf = text
    .split(/(?<=[.!?])\s+|,\s*/)
    .filter((c) => !/\byou\b/i.test(c))
    .join('. ');
  const absolutes = ABSOLUTE_RES.filter((a) => a.re.test(aboutSelf)).map((a) => a.word);
  const judgement = SELF_JUDGEMENT.exec(aboutSelf)?.[0];
  const questionSentence = text.split(/(?<=[.!?])\s+/).find((s) => s.endsWith('?'));

  const decisions: string[] = [];
  for (const [re, pick] of DECISION_RES) {
    const m = re.exec(text);
    const d = m ? phrase(pick(m), 16) : undefined;
    if (d && !decisions.includes(d)) decisions.push(d);
  }
  const proposals: string[] = [];
  for (const re of PROPOSAL_RES) {
    const p = phrase(re.exec(text)?.[1]);
    if (p && !proposals.includes(p) && !decisions.includes(p) && !NOT_PROPOSALS.test(p)) proposals.push(p);
  }
  const dates = [...new Set([...text.matchAll(DUE_ALL_RE)].map((m) => m[0]))];

  const feelings = readFeelings(text);
  const topics = readTopics(text);
  return {
    feelings,
    positive: isPositive(text, feelings, topics),
    events,
    circumstances,
    people: readPeople(text),
    topics,
    absolutes,
    selfJudgement: judgement && judgement.split(' ').length <= 12 ? judgement.trim() : undefined,
    names: readNames(text, tasks, speaker),
    proposals,
    decisions,
    tasks,
    dates,
    question: questionSentence && questionSentence.split(' ').length <= 16 ? questionSentence.replace(/^(?:[A-Z][a-z]+:\s*)/, '') : undefined,
  };
}
