// What the offline voice remembers per session: the sentences it has said (never again) and the
// templates it has used (less often). Bounded both ways: least recently active sessions are
// forgotten first, and a very long session forgets its oldest sentences.
import type { Reading } from './reading.ts';

/** An earlier human message and how it was read, so later turns keep the thread. */
export interface Earlier {
  text: string;
  speaker: string;
  reading: Reading;
}

/** Earlier human messages kept per session (a meeting thread needs more than a support chat). */
const EARLIER_KEPT = 8;

export interface SessionState {
  /** Requests answered so far; part of the seed, so a session replays identically. */
  turns: number;
  sentences: Set<string>;
  templates: Set<string>;
  /** The last few human messages answered, oldest first. */
  earlier: Earlier[];
}

export class SessionMemory {
  private readonly sessions = new Map<string, SessionState>();

  constructor(
    private readonly maxSessions = 1000,
    private readonly maxSentences = 2000,
  ) {}

  /** The session's state, marked as most recently used. */
  get(key: string): SessionState {
    let state = this.sessions.get(key);
    if (state) this.sessions.delete(key);
    else state = { turns: 0, sentences: new Set(), templates: new Set(), earlier: [] };
    this.sessions.set(key, state);
    while (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return state;
  }

  remember(state: SessionState, message: Earlier, sentences: readonly string[], templates: readonly string[]): void {
    if (state.earlier.at(-1)?.text !== message.text) state.earlier = [...state.earlier, message].slice(-EARLIER_KEPT);
    for (const s of sentences) state.sentences.add(s);
    for (const t of templates) state.templates.add(t);
    // Sets iterate in insertion order: the first entries are the oldest.
    for (const set of [state.sentences, state.templates]) while (set.size > this.maxSentences) set.delete(set.values().next().value!);
    state.turns++;
  }

  get size(): number {
    return this.sessions.size;
  }
}
