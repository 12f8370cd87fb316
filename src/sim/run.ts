// Runs whole simulated conversations: who the simulated person is for a scenario and seed, the
// default voice, and the loop opening -> (director round -> reply)* until the person is done, leaves,
// or the round limit is reached.
import type { Policy } from '../director/policy.ts';
import type { Pack, Persona } from '../persona/schema.ts';
import type { Generator } from '../speaker/generator.ts';
import { OfflineGenerator } from '../speaker/offline.ts';
import { Speaker, type SpeakerOptions } from '../speaker/speaker.ts';
import { seedFrom } from '../util/rng.ts';
import { SimConversation, type ConversationSetup } from './conversation.ts';
import { OfflineUser } from './offline-user.ts';
import { scriptOf, type Scenario, type UserProfile } from './scenario.ts';
import type { SimulatedUser } from './user.ts';

export const DEFAULT_MAX_ROUNDS = 10;

/** The profile a scenario is played with under a seed: the same for every policy, so comparisons are paired. */
export function profileFor(scenario: Scenario, seed: number, profiles: readonly UserProfile[]): UserProfile {
  if (profiles.length === 0) throw new Error('no user profiles loaded');
  return profiles[seedFrom(seed, scenario.id, 'profile') % profiles.length]!;
}

/** Seeds of one conversation's random streams, derived from the run seed and the scenario. */
export function conversationSeeds(seed: number, scenarioId: string): { director: number; user: number; voice: number } {
  return { director: seedFrom(seed, scenarioId, 'director'), user: seedFrom(seed, scenarioId, 'user'), voice: seedFrom(seed, scenarioId, 'voice') };
}

/** The built-in offline voice for one conversation or rollout (labelled offline wherever its text is shown). */
export function offlineVoice(seed: number): Generator {
  return new OfflineGenerator({ seed });
}

export function offlineUser(scenario: Scenario, profile: UserProfile, seed: number): OfflineUser {
  return new OfflineUser(scriptOf(scenario), profile, seed);
}

export interface ConversationSpec {
  pack: Pack;
  scenario: Scenario;
  seed: number;
  policy: Policy;
  /** The person; default: the offline simulated user with the profile chosen by profileFor. */
  user?: SimulatedUser;
  profiles: readonly UserProfile[];
  /** Default: a fresh offline voice seeded for this conversation. */
  generator?: Generator;
  /** The speaker's options (best-of-N: candidates and ranker), as serving configures them. */
  speakerOptions?: SpeakerOptions;
  personas?: Persona[];
  voices?: Map<string, Persona>;
  maxRounds?: number;
  /** Runs before every director decision (to record start states). */
  onDecision?: (c: SimConversation) => void;
}

export function setupFor(spec: ConversationSpec): ConversationSetup {
  const seeds = conversationSeeds(spec.seed, spec.scenario.id);
  return {
    pack: spec.pack,
    personas: spec.personas,
    voices: spec.voices,
    user: spec.user ?? offlineUser(spec.scenario, profileFor(spec.scenario, spec.seed, spec.profiles), seeds.user),
    policy: spec.policy,
    speaker: new Speaker(spec.generator ?? offlineVoice(seeds.voice), spec.speakerOptions),
    key: `sim:${spec.scenario.id}:${spec.seed}`,
    seed: seeds.director,
  };
}

/** Play one scenario to its end (or to the first failure of a model endpoint, kept in `failure`). */
export async function runConversation(spec: ConversationSpec): Promise<SimConversation> {
  const conversation = SimConversation.open(setupFor(spec));
  const maxRounds = spec.maxRounds ?? DEFAULT_MAX_ROUNDS;
  for (let round = 0; round < maxRounds && !conversation.ended; round++) {
    try {
      await conversation.runRound({ onDecision: spec.onDecision ? () => spec.onDecision!(conversation) : undefined });
      await conversation.reply();
    } catch (err) {
      // A failing model endpoint (the llm user, an llm director) ends the conversation; what was said stays.
      conversation.failure = (err as Error).message;
      break;
    }
  }
  return conversation;
}
