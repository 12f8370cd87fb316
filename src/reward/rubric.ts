// The agent-level rubric of the MASCOT paper (each criterion 1-5) and the shapes shared by every
// judge, the preference data and the reward model: a context is the transcript before a turn.
import { createHash } from 'node:crypto';
import type { Turn } from '../core/types.ts';

export const RUBRIC = [
  {
    key: 'emotional_expressiveness',
    label: 'Emotional Expressiveness',
    question: 'Does the turn express appropriate feeling and warmth for this persona, neither flat nor overdone?',
  },
  {
    key: 'empathetic_support',
    label: 'Empathetic Support Quality',
    question: 'Does it support the person (or the team) in the way this persona should: understanding first, no minimising, no lecturing?',
  },
  {
    key: 'consistency',
    label: 'Consistency',
    question: "Does it sound like this persona doing its own job (its role, voice and strategies), and respect the persona's never-rules?",
  },
  {
    key: 'relevance',
    label: 'Response Relevance',
    question: 'Does it respond to what was actually said, specifically rather than generically?',
  },
  {
    key: 'social_contribution',
    label: 'Social Contribution',
    question: 'Does it add something the other companions have not already said, without echoing them or taking over?',
  },
] as const;

export type RubricKey = (typeof RUBRIC)[number]['key'];
export type RubricScores = Record<RubricKey, number>;

export const RUBRIC_KEYS: RubricKey[] = RUBRIC.map((c) => c.key);

/** Mean of the five criteria: the number pairs are kept or dropped on. */
export function meanScore(scores: RubricScores): number {
  return RUBRIC_KEYS.reduce((sum, k) => sum + scores[k], 0) / RUBRIC_KEYS.length;
}

/** One turn of a context, as stored with judged candidates and preference pairs. */
export interface ContextTurn {
  name: string;
  text: string;
  isBot: boolean;
  personaId?: string;
}

/** Where a preference came from; every source is kept as a label in data, reports and exports. */
export type PreferenceSource =
  /** An LLM judge scored candidates on the rubric. */
  | 'judge'
  /** Offline-voice candidates scored by the offline rubric scorer (an offline stand-in for a judge). */
  | 'offline-rubric'
  /** A persona's own few-shot example against other personas' examples for the same context (offline bootstrap). */
  | 'examples'
  /** 👍 against 👎 reactions on a persona's turns. */
  | 'feedback'
  /** Moderator ratings (1-5) on a persona's turns. */
  | 'rating';

/** For persona `personaId` after `context`, `chosen` is a better turn than `rejected`. */
export interface PreferencePair {
  pack: string;
  personaId: string;
  context: ContextTurn[];
  chosen: string;
  rejected: string;
  /** The rejected turn's own context, when it was said at another moment (feedback pairs). */
  rejectedContext?: ContextTurn[];
  chosenScore?: number;
  rejectedScore?: number;
  source: PreferenceSource;
  judge?: string;
  channelKey?: string;
  /** "platform:userId" of every person whose words are in the context. */
  people: string[];
}

/** A turn with a known author persona (for persona identification). */
export interface AuthoredTurn {
  pack: string;
  personaId: string;
  context: ContextTurn[];
  text: string;
  source: PreferenceSource | 'logged';
}

export function contextFromTranscript(transcript: readonly Turn[]): ContextTurn[] {
  return transcript.map((t) => ({ name: t.author.name, text: t.text, isBot: t.author.isBot, ...(t.author.personaId ? { personaId: t.author.personaId } : {}) }));
}

/** Stable key of a context (groups candidates and splits train/held-out by context). */
export function contextKey(context: readonly ContextTurn[]): string {
  const h = createHash('sha256');
  for (const t of context) h.update(`${t.isBot ? 'b' : 'h'}\u241f${t.personaId ?? t.name}\u241f${t.text}\u241e`);
  return h.digest('hex').slice(0, 16);
}

/** The last thing a person (not a bot) said in a context. */
export function lastHumanText(context: readonly ContextTurn[]): string {
  for (let i = context.length - 1; i >= 0; i--) if (!context[i]!.isBot) return context[i]!.text;
  return '';
}

/** A context as engine turns (for prompts and scorers that read transcripts). */
export function toTranscript(context: readonly ContextTurn[]): Turn[] {
  return context.map((t, i) => ({
    messageId: `context-${i}`,
    author: { id: t.personaId ?? `person:${t.name}`, name: t.name, isBot: t.isBot, ...(t.personaId ? { personaId: t.personaId } : {}) },
    text: t.text,
    at: i,
  }));
}
