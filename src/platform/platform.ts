// The Platform port. Adapters (console, Discord, Slack) normalise their events into ChatEvent,
// hand them to the engine, and give the engine an Outlet to post with in that conversation.
// Adapters hold no conversation logic.
import type { Persona } from '../persona/schema.ts';

export interface PostOptions {
  /** Platform message id of the human message this turn answers (first turn of a round). */
  replyTo?: string;
  /** The built-in offline voice wrote this text: the adapter must show that to people. */
  offline: boolean;
  signal?: AbortSignal;
}

export interface PostedMessage {
  /** Platform message id of the first message posted (long turns may be split). */
  messageId: string;
}

/** How the engine speaks in one conversation, as a given persona. */
export interface Outlet {
  post(persona: Persona, text: string, options: PostOptions): Promise<PostedMessage>;
  /** Show the persona as typing while it writes (best effort, never throws into the round). */
  typing?(persona: Persona): Promise<void>;
  /** A plain notice from the system itself, not a persona (e.g. a crisis message, a truncation note). */
  notice?(text: string): Promise<void>;
}

/** A running platform connection, for start-up and shutdown. */
export interface Platform {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}
