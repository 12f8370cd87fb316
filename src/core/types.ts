// The shared vocabulary of the product: events from platforms, turns in a transcript,
// and the director's actions and decisions. Platform adapters translate into these types;
// everything after the adapter speaks only this language.

export type PlatformName = 'console' | 'discord' | 'slack' | 'sim';

/** Who wrote a message, as the conversation sees it. */
export interface Author {
  /** Platform user id (or persona id for our own bots). */
  id: string;
  /** Name shown in transcripts given to speakers. */
  name: string;
  /** True for any bot, ours or not. */
  isBot: boolean;
  /** Set when the author is one of our personas. */
  personaId?: string;
}

/** One incoming message, normalised by a platform adapter. */
export interface ChatEvent {
  platform: PlatformName;
  /** Conversation key, unique per platform: a channel, a thread or a DM. */
  channelId: string;
  /** Platform message id; used to deduplicate and to reply. */
  messageId: string;
  author: Author;
  text: string;
  /** Persona ids the human addressed (platform mentions or names in the text). */
  mentions: string[];
  /** Milliseconds since the epoch. */
  at: number;
  /** Server (Discord guild) or workspace (Slack team), when there is one. */
  spaceId?: string;
  /** A DM to one persona: the conversation is with that persona only. */
  directPersonaId?: string;
  /** For a thread: the channel it belongs to, whose settings and persona overrides apply to it. */
  parentChannelId?: string;
  /** The human addressed the companions as a group (a DM with the app, a mention of the app): a round runs even where the channel is not enabled. */
  addressed?: boolean;
}

/** A line of the transcript a speaker and the director see. */
export interface Turn {
  messageId: string;
  author: Author;
  text: string;
  at: number;
  /** For bot turns: the strategy the director asked for. */
  strategy?: string;
}

/** An action of the director: a persona speaking with a strategy, or yielding the floor. */
export type Action = { kind: 'speak'; personaId: string; strategy: string } | { kind: 'yield' };

export const YIELD: Action = { kind: 'yield' };

export function actionKey(action: Action): string {
  return action.kind === 'yield' ? 'yield' : `${action.personaId}:${action.strategy}`;
}

export function parseActionKey(key: string): Action {
  if (key === 'yield') return YIELD;
  const i = key.indexOf(':');
  if (i <= 0 || i === key.length - 1) throw new Error(`invalid action key "${key}": expected "yield" or "persona:strategy"`);
  return { kind: 'speak', personaId: key.slice(0, i), strategy: key.slice(i + 1) };
}

/** What a speaker is told to do: who speaks, with which strategy, and a one-line instruction. */
export interface Directive {
  personaId: string;
  strategy: string;
  instruction: string;
}

/** One director decision, with everything needed to learn from it later. */
export interface Decision {
  action: Action;
  directive?: Directive;
  /** Probability of every action slot of the pack (same order as `actions`), summing to 1. */
  probabilities: number[];
  /** Action keys of the pack in slot order. */
  actions: string[];
  /** Probability of the chosen action under the policy that chose it (the propensity). */
  propensity: number;
  policyId: string;
  policyVersion: string;
  /** Why, in a few words, for /explain and logs. */
  reason: string;
}
