// The environment the director is trained in (GRPO, stage 2 of MASCOT): conversation prefixes
// right before a director decision, and rollouts that force a first action there, continue with a
// policy, and score the block with the group reward. Speakers (the given Generator, the offline
// voice by default) and the simulated user are frozen; everything is deterministic given the seed.
//
// API (stable):
//   startStates(pack, scenarios, seeds, options?) -> Promise<SimStart[]>
//       plays every scenario under every seed with options.policy (default: heuristic) and keeps the
//       point before each director decision (options.every: keep every n-th; options.maxRounds).
//   rollout(start, firstAction, { policy, generator?, blockTurns?, seed, weights?, fidelity? })
//       -> Promise<{ reward, breakdown, turns, engagement, ended? }>
//       forces firstAction, lets `policy` finish the round, lets the person reply, and goes on until the
//       block holds at least blockTurns turns (default 3) and ends with the person's reply (or the
//       conversation ends). reward = breakdown.total of groupReward over the block; engagement is the
//       mean of the person's engagement over the replies in the block.
//   startFromLogged(pack, loggedState, options?) -> SimStart
//       a start from a logged decision's state (the `state_json` of the decisions table, written by
//       summarizeState in src/session/engine.ts), with an estimated simulated person (see estimateNeeds).
//   allowedActions(start) -> Action[]    the actions the director may take at a start
import { z } from 'zod';
import { parseActionKey, type Action, type Turn } from '../core/types.ts';
import { actionMask, actionSpace } from '../director/actions.ts';
import { affectOf } from '../director/affect.ts';
import type { DirectorState, Policy } from '../director/policy.ts';
import { builtinPolicies } from '../director/registry.ts';
import { groupReward, type FidelityScorer, type RewardBreakdown, type RewardWeights } from '../eval/group-reward.ts';
import { PHASES, type Pack, type Persona, type Phase } from '../persona/schema.ts';
import type { Generator } from '../speaker/generator.ts';
import { Speaker } from '../speaker/speaker.ts';
import { seedFrom } from '../util/rng.ts';
import { SimConversation, type ConversationPoint } from './conversation.ts';
import { OfflineUser } from './offline-user.ts';
import { DEFAULT_MAX_ROUNDS, offlineVoice, profileFor, runConversation } from './run.ts';
import { loadProfiles, scriptOf, type Needs, type Scenario, type UserProfile } from './scenario.ts';
import type { Ending } from './user.ts';

/** A conversation prefix right before a director decision. */
export interface SimStart {
  /** Stable id: scenario, seed and decision number (or the logged decision's id). */
  id: string;
  pack: Pack;
  /** Personas as the director sees them there. */
  personas: Persona[];
  /** The state the director decides from at this point (built as the engine builds it). */
  state: DirectorState;
  /** What a rollout continues from (the person's latent state included). */
  point: ConversationPoint;
  source: 'simulation' | 'log';
  scenarioId?: string;
  profileId?: string;
}

export interface StartOptions {
  /** The policy that plays the prefixes (default: heuristic). */
  policy?: Policy;
  profiles?: readonly UserProfile[];
  maxRounds?: number;
  /** Keep every n-th decision point (default 1: all). */
  every?: number;
  /** Voice for the prefixes (default: a fresh offline voice per conversation). */
  generator?: (seed: number) => Generator;
}

export async function startStates(pack: Pack, scenarios: readonly Scenario[], seeds: readonly number[], options: StartOptions = {}): Promise<SimStart[]> {
  const policy = options.policy ?? builtinPolicies().get('heuristic')!;
  const profiles = options.profiles ?? loadProfiles();
  const every = Math.max(1, Math.floor(options.every ?? 1));
  const starts: SimStart[] = [];
  for (const seed of seeds) {
    for (const scenario of scenarios) {
      const profile = profileFor(scenario, seed, profiles);
      let n = 0;
      await runConversation({
        pack,
        scenario,
        seed,
        policy,
        profiles,
        generator: options.generator?.(seedFrom(seed, scenario.id, 'voice')),
        maxRounds: options.maxRounds ?? DEFAULT_MAX_ROUNDS,
        onDecision: (c) => {
          if (n++ % every !== 0) return;
          const state = c.state();
          starts.push({
            id: `${scenario.id}/${seed}/${n - 1}`,
            pack,
            personas: c.personas,
            state,
            point: c.point(seedFrom(seed, scenario.id, n - 1)),
            source: 'simulation',
            scenarioId: scenario.id,
            profileId: profile.id,
          });
        },
      });
    }
  }
  return starts;
}

export interface RolloutOptions {
  /** Continues the block after the forced first action. */
  policy: Policy;
  /** The frozen speakers' backend (default: the offline voice, seeded from `seed`). */
  generator?: Generator;
  /** The block holds at least this many turns and ends with the person's reply (default 3). */
  blockTurns?: number;
  seed: number;
  weights?: Partial<RewardWeights>;
  fidelity?: FidelityScorer;
}

export interface RolloutResult {
  reward: number;
  breakdown: RewardBreakdown;
  /** The block: companion turns and the person's replies, in order. */
  turns: Turn[];
  engagement: number;
  /** Set when the conversation ended inside the block. */
  ended?: Ending;
}

/** How many earlier turns the reward compares the block against (originality looks this far back). */
const REWARD_CONTEXT = 24;

export async function rollout(start: SimStart, firstAction: Action, options: RolloutOptions): Promise<RolloutResult> {
  const blockTurns = Math.max(1, options.blockTurns ?? 3);
  const key = `rollout:${start.id}:${options.seed}`;
  const conversation = SimConversation.resume(
    {
      pack: start.pack,
      personas: start.personas,
      user: start.point.user,
      policy: options.policy,
      speaker: new Speaker(options.generator ?? offlineVoice(seedFrom(options.seed, start.id, 'voice'))),
      key,
      seed: seedFrom(options.seed, start.id, 'director'),
      maxBotTurns: start.state.maxBotTurns,
    },
    { ...start.point, user: start.point.user.fork(seedFrom(options.seed, start.id, 'user')) },
  );
  const from = conversation.history.length;
  let forced: Action | undefined = firstAction;
  const engagements: number[] = [];
  for (;;) {
    await conversation.runRound({ forced });
    forced = undefined;
    engagements.push((await conversation.reply()).engagement);
    if (conversation.ended || conversation.history.length - from >= blockTurns) break;
  }
  const turns = conversation.since(from);
  const engagement = engagements.reduce((a, b) => a + b, 0) / engagements.length;
  const breakdown = await groupReward(
    { pack: start.pack, personas: start.personas, context: conversation.history.slice(Math.max(0, from - REWARD_CONTEXT), from), turns, engagement },
    { weights: options.weights, fidelity: options.fidelity },
  );
  return { reward: breakdown.total, breakdown, turns, engagement, ...(conversation.ended ? { ended: conversation.ended } : {}) };
}

/** Actions the director may take at a start (the pack's action space under the mask). */
export function allowedActions(start: SimStart): Action[] {
  const slots = actionSpace(start.pack);
  const mask = actionMask(start.state, slots);
  return slots.filter((_, i) => mask[i]).map(parseActionKey);
}

// --- starts from logged decisions --------------------------------------------------------------

/** The shape summarizeState (src/session/engine.ts) logs; checked so a bad row fails with its field named. */
export const loggedStateSchema = z.object({
  human: z.string(),
  humanName: z.string(),
  transcript: z.array(z.object({ name: z.string(), personaId: z.string().nullable(), text: z.string(), strategy: z.string().nullable() })),
  roundTurns: z.array(z.object({ personaId: z.string(), strategy: z.string() })),
  sessionStrategies: z.array(z.string()),
  humanTurnCount: z.number().int().min(0),
  mentions: z.array(z.string()),
  directPersonaId: z.string().nullable(),
  personas: z.array(z.object({ id: z.string(), talkativeness: z.number(), strategies: z.array(z.string()) })),
  maxBotTurns: z.number().int().min(0),
  floor: z.number(),
});
export type LoggedState = z.infer<typeof loggedStateSchema>;

export interface LoggedStartOptions {
  /** Id of the start (e.g. the decision row id). */
  id?: string;
  /** The person's profile (default: the first of scenarios/profiles.yaml). */
  profile?: UserProfile;
  seed?: number;
}

/**
 * A start from a logged decision. The personas are the pack's, tuned as logged (talkativeness,
 * strategies); a logged persona the pack no longer has is an error. The person is an offline user
 * with needs estimated from the logged conversation (estimateNeeds) and generic lines to say.
 */
export function startFromLogged(pack: Pack, loggedState: unknown, options: LoggedStartOptions = {}): SimStart {
  const parsed = loggedStateSchema.safeParse(typeof loggedState === 'string' ? safeJson(loggedState) : loggedState);
  if (!parsed.success) throw new Error(`logged state${options.id ? ` ${options.id}` : ''}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`).join('; ')}`);
  const logged = parsed.data;
  const personas = logged.personas.map((lp) => {
    const p = pack.personas.find((x) => x.id === lp.id);
    if (!p) throw new Error(`logged state${options.id ? ` ${options.id}` : ''}: personas: "${lp.id}" is not a persona of pack "${pack.id}"`);
    return { ...p, talkativeness: lp.talkativeness, strategies: lp.strategies.filter((s) => s in pack.strategies) };
  });

  const history: Turn[] = logged.transcript.map((t, i) => ({
    messageId: `log#${i}`,
    author: t.personaId ? { id: t.personaId, name: t.name, isBot: true, personaId: t.personaId } : { id: `log-${t.name.toLowerCase()}`, name: t.name, isBot: false },
    text: t.text,
    at: i,
    ...(t.strategy ? { strategy: t.strategy } : {}),
  }));
  let human = [...history].reverse().find((t) => !t.author.isBot && t.text === logged.human);
  if (!human) {
    human = { messageId: `log#${history.length}`, author: { id: `log-${logged.humanName.toLowerCase()}`, name: logged.humanName, isBot: false }, text: logged.human, at: history.length };
    history.push(human);
  }

  const kind = pack.id === 'meeting' ? 'meeting' : 'support';
  const scenario = genericScenario(kind, logged, estimateNeeds(pack, logged));
  const script = scriptOf(scenario, logged.humanName);
  const user = new OfflineUser(script, options.profile ?? loadProfiles()[0]!, options.seed ?? 1);
  const point: ConversationPoint = {
    history,
    human,
    roundTurns: logged.roundTurns,
    roundDecisions: logged.roundTurns.length,
    sessionStrategies: logged.sessionStrategies,
    humanTurnCount: logged.humanTurnCount,
    user,
  };
  const state: DirectorState = {
    pack,
    personas,
    transcript: history,
    human,
    roundTurns: logged.roundTurns,
    sessionStrategies: logged.sessionStrategies,
    humanTurnCount: logged.humanTurnCount,
    mentions: logged.mentions,
    ...(logged.directPersonaId ? { directPersonaId: logged.directPersonaId } : {}),
    maxBotTurns: logged.maxBotTurns,
    floor: logged.floor,
  };
  return { id: options.id ?? `log/${seedFrom(JSON.stringify(logged)).toString(36)}`, pack, personas, state, point, source: 'log', profileId: user.profile.id };
}

/**
 * Needs of a logged person, estimated (the log has no latent state): each phase starts at a base,
 * the human's distress raises the need to be heard, a request for advice or a decision raises the
 * need to act, and every earlier companion turn of that phase meets 0.25 of it:
 *   explore = 0.35 + 0.6 distress,  insight = 0.6,  action = 0.5 + 0.3 [asks for advice or a decision]
 */
export function estimateNeeds(pack: Pack, logged: LoggedState): Needs {
  const affect = affectOf(logged.human);
  const needs: Needs = { explore: 0.35 + 0.6 * affect.distress, insight: 0.6, action: 0.5 + (affect.asksForAdvice || affect.decisionCue || affect.actionCue ? 0.3 : 0) };
  for (const s of logged.sessionStrategies) {
    const phase: Phase | undefined = pack.strategies[s]?.phase;
    if (phase) needs[phase] = Math.max(0, needs[phase] - 0.25);
  }
  for (const p of PHASES) needs[p] = Math.min(1, needs[p]);
  return needs;
}

function genericScenario(kind: 'support' | 'meeting', logged: LoggedState, needs: Needs): Scenario {
  if (kind === 'support')
    return {
      kind,
      id: 'logged',
      valence: 'neutral',
      situation: 'A person from a logged conversation.',
      opening: logged.human,
      need: 'estimated from the log',
      needs,
      shares: ["It's been on my mind all week.", "I haven't really told anyone else about it.", 'Some days it feels heavier than others.'],
      realisations: ['Maybe I have been expecting too much of myself.', 'I think part of it is feeling I should have it figured out by now.'],
      steps: ['talk to someone I trust about it this week', "write down what bothers me most and start there"],
      whenRushed: "I'm not ready for solutions yet. I need someone to hear this first.",
    };
  const names = [...new Set(logged.transcript.filter((t) => t.personaId === null).map((t) => t.name))].filter((n) => /^[A-Z][A-Za-z'-]{0,23}$/.test(n));
  const people = (names.length >= 2 ? names : [logged.humanName, 'Alex']).slice(0, 4);
  return {
    kind,
    id: 'logged',
    type: 'product',
    agenda: 'The topic of a logged meeting thread.',
    opening: logged.human,
    participants: people.map((name, i) => ({ name, position: GENERIC_POSITIONS[i % GENERIC_POSITIONS.length]!, concern: GENERIC_CONCERNS[i % GENERIC_CONCERNS.length]! })),
    needs,
    decisions: ['We go with the smaller scope for now.'],
    actionItems: [{ owner: people[0]!, task: 'write up the plan', due: 'Friday' }],
    whenRushed: "Hold on, we haven't heard everyone yet.",
  };
}

const GENERIC_POSITIONS = ['I think we should keep the scope small this time.', 'I would rather do it properly, even if it takes longer.', 'I can live with either option if we agree on a date.', 'We should check with the people it affects first.'];
const GENERIC_CONCERNS = ["My worry is we don't have the people to do it properly.", 'The risk is that we decide now and revisit it next month anyway.', 'I am not sure we know what it will cost.', 'If we slip again, people will stop trusting the plan.'];

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
