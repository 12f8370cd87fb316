// The Policy port: channel state in, a full distribution over the pack's actions out.
// Every policy keeps each allowed action above a floor so logged decisions support
// off-policy evaluation (IPS needs pi_b(a|x) > 0 wherever pi_e(a|x) > 0).
import type { Action, Decision, Turn } from '../core/types.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import type { Rng } from '../util/rng.ts';

/** Everything a policy may look at when deciding the next turn. */
export interface DirectorState {
  pack: Pack;
  /** Personas as currently tuned (overrides applied); disabled ones are excluded. */
  personas: Persona[];
  /** Recent transcript, oldest first, ending with the human message of this round or a bot turn after it. */
  transcript: Turn[];
  /** The human message that started this round. */
  human: Turn;
  /** Bot turns already taken in this round, in order. */
  roundTurns: { personaId: string; strategy: string }[];
  /** Strategies used by bots since the session began (most recent last, bounded). */
  sessionStrategies: string[];
  /** Number of human messages in the session so far, this one included. */
  humanTurnCount: number;
  /** Persona ids the human addressed in this message. */
  mentions: string[];
  /** A 1:1 conversation with this persona. */
  directPersonaId?: string;
  maxBotTurns: number;
  floor: number;
}

export interface Policy {
  readonly id: string;
  readonly version: string;
  decide(state: DirectorState, rng: Rng): Decision | Promise<Decision>;
}
