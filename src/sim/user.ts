// The SimulatedUser port: the person (or meeting) on the other side of a simulated conversation.
// `offline` is a latent-state simulator (offline-user.ts); `llm` plays the same role through an
// OpenAI-compatible model (llm-user.ts). Both see only what a person in the channel would see.
import type { Turn } from '../core/types.ts';
import type { Pack } from '../persona/schema.ts';
import type { Needs, ScriptLine } from './scenario.ts';

/** One round as the person experienced it. */
export interface RoundView {
  pack: Pack;
  /** Everything said so far, oldest first, this round's companion turns included. */
  history: Turn[];
  /** The human message that started the round. */
  human: Turn;
  /** Companion turns of this round; empty when the director yielded at once. */
  botTurns: Turn[];
}

export type Ending = 'resolved' | 'left';

export interface UserReply {
  /** What the human side says next, one message per line (in a meeting, several people may speak). */
  lines: ScriptLine[];
  /** How engaged the person is after this round, in [0, 1]. */
  engagement: number;
  /** Set when the conversation ends with this reply. */
  end?: Ending;
}

export interface SimulatedUser {
  readonly kind: 'offline' | 'llm';
  /** The first message of the conversation. */
  opening(): ScriptLine;
  respond(round: RoundView): Promise<UserReply>;
  /** Needs still unmet, 0..1 each; undefined for simulators without an explicit state. */
  needs(): Needs | undefined;
  /** An independent copy from this point on, with its own random stream. */
  fork(seed: number): SimulatedUser;
}
