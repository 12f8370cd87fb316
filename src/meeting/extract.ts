// The extractive recap: built only from the thread's own sentences, no model involved.
//  - Decisions: sentences with a decision cue ("we decided", "agreed", "let's go with",
//    "Decision:"), not questions or negations. A bare "Agreed." stands for the proposal it answers.
//  - Action items: "action item: ...", "Dana to ... by Friday", "@Lee will ...", "I'll ..." (the
//    author owns it); owners only when a person is named, due dates as written.
//  - Summary: the opening message, and the sentences most central to the thread, where
//    centrality(s) = sum over distinct content words w of s of ln(1 + df(w)) / sqrt(|s|),
//    df(w) = number of messages containing w, |s| = content words in s.
// People's messages only: bot turns are commentary, not the record.
import type { ActionItem, Recap, RecapDecision, ThreadMessage } from './recap.ts';
import { participantsOf } from './recap.ts';

export interface ExtractOptions {
  /** Names of people mentioned in the thread (as "@Name" in the text), so names with spaces are found. */
  knownNames?: readonly string[];
  /** Sentences shown as points raised, at most. */
  maxPoints?: number;
}

const STOP = new Set(
  ('a an and are as at be been but by can could did do does for from had has have he her his how i if in into is it its just me my no not of on or our ' +
    'she so than that the their them then there these they this those to too up us was we were what when where which who why will with would you your ' +
    "i'm i'll we'll we're it's that's don't can't won't let's also really think maybe yes yeah okay ok sure good great thanks all any some one more very").split(' '),
);

/** Words that can stand before "will" or "to" without being a person. */
const NOT_OWNER = new Set(
  ('it this that there we they he she you who what which where when why how everyone everybody someone somebody anyone anybody nobody none one ' +
    'these those here then also maybe but and so if the a an all both each some team group nothing something this that which ok okay yes no ' +
    'monday tuesday wednesday thursday friday saturday sunday today tomorrow next last time plan need happy glad remember').split(' '),
);

const DECISION_CUES = [
  /\b(?:we|we've|we have|we all|the team|the group|everyone)\s+(?:have\s+|has\s+|all\s+)?(?:decided|agreed|settled|concluded)\b/i,
  /^(?:final\s+)?decision\s*[:\-–—]/i,
  /\bdecided\s*[:\-–—]/i,
  /\blet'?s\s+go\s+with\b/i,
  /\blet\s+us\s+go\s+with\b/i,
  /\bwe(?:'re|\s+are|'ll|\s+will)\s+go(?:ing)?\s+with\b/i,
  /\b(?:the\s+)?(?:final\s+)?(?:decision|call)\s+is\b/i,
  /\bagreed\b/i,
  /\bsigned\s+off\s+on\b/i,
  /\bapproved\b/i,
];
const NEGATED = /\b(?:not|no|yet to|haven't|hasn't|didn't|don't|never|isn't|wasn't)\b[^.!?]{0,20}\b(?:decided|agreed|decision|settled|approved|call)\b/i;
const PROPOSAL = /\b(?:should|let'?s|propose|suggest|how about|what if|could we|i think we|go with|i'd say|we could)\b/i;
const ACTION_MARKER = /^(?:action\s+items?|ai|todo|to-do|to do|next\s+steps?|follow[- ]up)\s*[:\-–—]\s*/i;

const WEEKDAY = '(?:mon|tues|wednes|thurs|fri|satur|sun)day';
const MONTH = '(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?';
const DUE_WHEN =
  `(?:(?:next|this)\\s+(?:week|month|sprint|${WEEKDAY})|${WEEKDAY}(?:\\s+(?:morning|afternoon|evening|eod))?|tomorrow(?:\\s+(?:morning|afternoon|evening))?|tonight|today|eod|eow|cob|` +
  `end\\s+of\\s+(?:the\\s+)?(?:day|week|month|sprint|quarter)|${MONTH}\\s+\\d{1,2}(?:st|nd|rd|th)?|\\d{1,2}(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}|\\d{4}-\\d{2}-\\d{2}|\\d{1,2}/\\d{1,2}(?:/\\d{2,4})?|q[1-4])`;
const DUE = new RegExp(`\\s*,?\\s*\\b(?:by|before|due(?:\\s+(?:on|by))?|no\\s+later\\s+than|on)\\s+(${DUE_WHEN})\\b`, 'i');

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface Sentence {
  text: string;
  message: ThreadMessage;
  /** Index of the message in the thread. */
  at: number;
}

/** Split a message into sentences; list markers are dropped. */
export function sentencesOf(text: string): string[] {
  return text
    .split(/\n+/)
    .map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, ''))
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=["'(@A-Z0-9])/))
    .map((s) => s.trim())
    .filter((s) => /[a-z0-9]/i.test(s));
}

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[a-z0-9][a-z0-9']*/g) ?? []).filter((w) => w.length >= 3 && !STOP.has(w));
}

function similar(a: string, b: string): boolean {
  const A = new Set(contentWords(a));
  const B = new Set(contentWords(b));
  if (A.size === 0 || B.size === 0) return a.trim().toLowerCase() === b.trim().toLowerCase();
  let both = 0;
  for (const w of A) if (B.has(w)) both++;
  return both / (A.size + B.size - both) >= 0.6;
}

const tidy = (s: string) =>
  s
    .replace(/^(?:ok(?:ay)?|so|great|alright|right|cool|good)[,!.]?\s+/i, '')
    .replace(/[\s,;:.!]+$/, '')
    .trim();
const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

// --- decisions ---------------------------------------------------------------------------

function decisionOf(s: Sentence, earlier: readonly Sentence[]): RecapDecision | undefined {
  const text = s.text;
  if (text.endsWith('?') || NEGATED.test(text) || !DECISION_CUES.some((re) => re.test(text))) return undefined;
  const stated = tidy(text.replace(/^(?:final\s+)?(?:decision|decided)\s*[:\-–—]\s*/i, ''));
  // "Agreed." or "+1, agreed" says yes to something said before: record that proposal.
  const rest = contentWords(text.replace(/\bagreed\b|\bapproved\b/gi, ''));
  if (/\bagreed\b|\bapproved\b/i.test(text) && rest.length < 3 && !/\bagreed\s+(?:to|on|that)\b/i.test(text)) {
    const proposal = [...earlier].reverse().find((e) => e.message.authorId !== s.message.authorId && PROPOSAL.test(e.text) && !e.text.endsWith('?'));
    const question = [...earlier].reverse().find((e) => e.message.authorId !== s.message.authorId && PROPOSAL.test(e.text));
    const answered = proposal ?? question;
    if (!answered) return undefined;
    return { text: capitalise(tidy(answered.text.replace(/\?$/, ''))), by: answered.message.authorName };
  }
  return stated ? { text: capitalise(stated), by: s.message.authorName } : undefined;
}

// --- action items --------------------------------------------------------------------------

function splitDue(task: string): { task: string; due?: string } {
  const m = DUE.exec(task);
  if (!m) return { task };
  return { task: (task.slice(0, m.index) + task.slice(m.index + m[0].length)).trim(), due: m[1]!.trim() };
}

/** Not something to do: "Dana will be out", "I'll be honest". */
const NOT_A_TASK = /^(?:be|been|have been|probably|likely|not|never|still|also be|need to think)\b/i;

function actionOf(s: Sentence, ownerPattern: string, names: readonly string[]): ActionItem | undefined {
  let text = s.text;
  const marked = ACTION_MARKER.test(text);
  text = text.replace(ACTION_MARKER, '');
  const question = text.endsWith('?');
  const self = s.message.authorName;
  const owner = (name: string) => (/^i$/i.test(name) ? self : name.replace(/^@/, '').replace(/[.,;:!?'-]+$/, ''));

  const forms: RegExp[] = [
    // "Dana to send the deck", "@Lee to review"
    new RegExp(`^(${ownerPattern})\\s+(?:to|is to)\\s+(.+)$`, 'i'),
    // "Dana, can you send the deck?"
    new RegExp(`^(${ownerPattern}),?\\s+(?:can|could|would)\\s+you\\s+(?:please\\s+)?(.+?)\\??$`, 'i'),
    // "Dana will ...", "... and I'll ...", "Lee is going to ..."
    new RegExp(`(?:^|[,;:]\\s*|\\b(?:and|so|then)\\s+)(${ownerPattern}|I)(?:\\s+will|'ll|\\s+is\\s+going\\s+to|\\s+am\\s+going\\s+to|'m\\s+going\\s+to|\\s+can\\s+take|\\s+will\\s+take)\\s+(.+)$`, 'i'),
    // "... assigned to @Dana" / "owner: Dana"
    new RegExp(`^(.+?)\\s*[,(—-]?\\s*(?:assigned\\s+to|owner\\s*[:=])\\s*(${ownerPattern})\\)?$`, 'i'),
  ];
  for (const [i, re] of forms.entries()) {
    if (i !== 1 && question) continue;
    const m = re.exec(text);
    if (!m) continue;
    const [who, what] = i === 3 ? [m[2]!, m[1]!] : [m[1]!, m[2]!];
    const known = who.startsWith('@') || /^i$/i.test(who) || names.some((n) => n.toLowerCase() === who.toLowerCase());
    // Any other capitalised word may be a name ("Legal will review") but also an ordinary
    // sentence opener ("Remember to ..."): trust it only where the form makes it an owner.
    if (!known && (!(i >= 2 || marked) || !/^[A-Z]/.test(who) || NOT_OWNER.has(who.toLowerCase()))) continue;
    const { task, due } = splitDue(tidy(what.replace(/^please\s+/i, '')));
    if (!task || NOT_A_TASK.test(task)) continue;
    return { task, owner: owner(who), ...(due ? { due } : {}) };
  }
  if (!marked) return undefined;
  const { task, due } = splitDue(tidy(text));
  return task ? { task: capitalise(task), ...(due ? { due } : {}) } : undefined;
}

// --- summary ---------------------------------------------------------------------------------

function quote(text: string, max = 180): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return `“${t.length > max ? `${t.slice(0, max - 1).trimEnd()}…` : t}”`;
}

function centralSentences(sentences: readonly Sentence[], messages: readonly ThreadMessage[], exclude: Set<Sentence>, max: number): Sentence[] {
  const df = new Map<string, number>();
  for (const m of messages) for (const w of new Set(contentWords(m.text))) df.set(w, (df.get(w) ?? 0) + 1);
  return sentences
    .filter((s) => !exclude.has(s))
    .map((s) => {
      const words = [...new Set(contentWords(s.text))];
      const score = words.length < 4 ? 0 : words.reduce((sum, w) => sum + Math.log(1 + (df.get(w) ?? 0)), 0) / Math.sqrt(words.length);
      return { s, score };
    })
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, max)
    .map((x) => x.s)
    .sort((a, b) => a.at - b.at);
}

// --- the recap -------------------------------------------------------------------------------

export function extractiveRecap(messages: readonly ThreadMessage[], options: ExtractOptions = {}): Recap {
  const people = messages.filter((m) => !m.isBot);
  const participants = participantsOf(messages);
  const names = [...new Set([...participants, ...(options.knownNames ?? [])])].filter((n) => n.trim()).sort((a, b) => b.length - a.length);
  // Known names (with spaces) first, then any @handle or capitalised word.
  const ownerPattern = [...names.map((n) => `@?${escapeRe(n)}`), "@[\\w.'-]+", "[A-Z][\\w'-]+"].join('|');

  const sentences: Sentence[] = people.flatMap((message, at) => sentencesOf(message.text).map((text) => ({ text, message, at })));
  const decisions: RecapDecision[] = [];
  const actionItems: ActionItem[] = [];
  const used = new Set<Sentence>();
  sentences.forEach((s, i) => {
    const decision = decisionOf(s, sentences.slice(0, i));
    if (decision) {
      // A later restatement replaces an earlier one.
      const same = decisions.findIndex((d) => similar(d.text, decision.text));
      if (same >= 0) decisions.splice(same, 1);
      decisions.push(decision);
      used.add(s);
      return;
    }
    const item = actionOf(s, ownerPattern, names);
    if (item) {
      const same = actionItems.findIndex((a) => a.owner === item.owner && similar(a.task, item.task));
      if (same >= 0) actionItems.splice(same, 1);
      actionItems.push(item);
      used.add(s);
    }
  });

  const opening = sentences[0];
  const parts: string[] = [];
  if (opening) {
    used.add(opening);
    parts.push(`${opening.message.authorName} ${opening.text.endsWith('?') ? 'asked' : 'opened with'}: ${quote(opening.text)}`);
    const points = centralSentences(sentences, people, used, options.maxPoints ?? 2);
    if (points.length > 0) parts.push(`Points raised: ${points.map((p) => `${quote(p.text, 160)} (${p.message.authorName})`).join('; ')}`);
  }
  parts.push(`${participants.length} ${participants.length === 1 ? 'person' : 'people'}, ${people.length} message${people.length === 1 ? '' : 's'}.`);
  return {
    summary: parts.map((p) => (/[.!?”)]$/.test(p) ? p : `${p}.`)).join(' '),
    decisions,
    actionItems,
    participants,
    messageCount: messages.length,
    source: 'extractive',
  };
}
