// Logged director decisions read back from SQLite for learning: the state the policy saw
// (rebuilt into a DirectorState against the pack), the logged distribution and choice, and any
// human feedback on the round. Rows that no longer fit the pack are skipped and counted, with
// the first reasons kept, so one stale row never hides the rest.
import { z } from 'zod';
import type { Turn } from '../core/types.ts';
import type { DirectorState } from '../director/policy.ts';
import type { Pack } from '../persona/schema.ts';
import type { Db } from '../store/db.ts';

const loggedStateSchema = z.object({
  human: z.string(),
  humanName: z.string().default('someone'),
  transcript: z.array(z.object({ name: z.string(), personaId: z.string().nullable(), text: z.string(), strategy: z.string().nullable().optional() })),
  roundTurns: z.array(z.object({ personaId: z.string(), strategy: z.string() })),
  sessionStrategies: z.array(z.string()),
  humanTurnCount: z.number().int().nonnegative(),
  mentions: z.array(z.string()).default([]),
  directPersonaId: z.string().nullable().optional(),
  personas: z.array(z.object({ id: z.string(), talkativeness: z.number(), strategies: z.array(z.string()) })),
  maxBotTurns: z.number().int().nonnegative(),
  floor: z.number().nonnegative(),
});

/** Rebuild the state a policy saw from a decision's state_json. Throws naming the bad field. */
export function stateFromLogged(pack: Pack, raw: unknown): DirectorState {
  const parsed = loggedStateSchema.safeParse(raw);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join('.') || '(state)'}: ${i.message}`).join('; '));
  const s = parsed.data;
  const personas = s.personas.map((lp) => {
    const persona = pack.personas.find((p) => p.id === lp.id);
    if (!persona) throw new Error(`personas: "${lp.id}" is not a persona of pack "${pack.id}"`);
    return { ...persona, talkativeness: lp.talkativeness, strategies: lp.strategies.filter((st) => persona.strategies.includes(st)) };
  });
  const transcript: Turn[] = s.transcript.map((t, i) => ({
    messageId: `logged-${i}`,
    author: { id: t.personaId ?? t.name, name: t.name, isBot: t.personaId !== null, ...(t.personaId ? { personaId: t.personaId } : {}) },
    text: t.text,
    at: i,
    ...(t.strategy ? { strategy: t.strategy } : {}),
  }));
  // The human message of the round is the last human turn with its text.
  let human = [...transcript].reverse().find((t) => !t.author.isBot && t.text === s.human);
  if (!human) {
    human = { messageId: 'logged-human', author: { id: s.humanName, name: s.humanName, isBot: false }, text: s.human, at: transcript.length };
    transcript.push(human);
  }
  return {
    pack,
    personas,
    transcript,
    human,
    roundTurns: s.roundTurns,
    sessionStrategies: s.sessionStrategies,
    humanTurnCount: s.humanTurnCount,
    mentions: s.mentions,
    ...(s.directPersonaId ? { directPersonaId: s.directPersonaId } : {}),
    maxBotTurns: s.maxBotTurns,
    floor: s.floor,
  };
}

export interface LoggedDecision {
  id: number;
  channelKey: string;
  roundId: string;
  state: DirectorState;
  /** The logged state_json as stored (for simulation starts from logs). */
  rawState: unknown;
  /** Slot index of the logged action in the pack's action space. */
  action: number;
  /** The logging policy's probability of that action. */
  propensity: number;
  /** The logging policy's full distribution, in the pack's slot order. */
  probabilities: number[];
  policyId: string;
  policyVersion: string;
  /** Mean human feedback on the round in [-1, 1] (reactions +-1; ratings 1..5 mapped to -1..1), if any. */
  feedback?: number;
  at: number;
}

export interface LoggedSet {
  decisions: LoggedDecision[];
  skipped: number;
  /** The first few reasons rows were skipped, "decision 12: ...". */
  problems: string[];
}

export interface LoggedQuery {
  /** Only decisions at or after this time (ms since epoch). */
  since?: number;
  limit?: number;
  /** Only decisions logged by this policy id. */
  policyId?: string;
}

/** Logged decisions of a pack, oldest first, with feedback joined per round. */
export function loadLoggedDecisions(db: Db, pack: Pack, slots: readonly string[], query: LoggedQuery = {}): LoggedSet {
  const rows = db
    .prepare(
      `SELECT d.id, d.channel_key AS channelKey, d.round_id AS roundId, d.state_json AS state, d.actions_json AS actions, d.probs_json AS probs,
              d.chosen, d.propensity, d.policy_id AS policyId, d.policy_version AS policyVersion, d.at,
              (SELECT AVG(CASE WHEN f.kind = 'rating' THEN (f.value - 3) / 2.0 ELSE MAX(-1, MIN(1, f.value)) END)
                 FROM feedback f WHERE f.round_id = d.round_id) AS feedback
       FROM decisions d
       WHERE d.pack = ? AND d.at >= ? AND (? IS NULL OR d.policy_id = ?)
         AND NOT EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = d.channel_key AND d.at BETWEEN w.from_at AND w.until_at) -- crisis windows (migrations/006)
         -- and the rounds the crisis message answered: their reward would read it as the person's reply
         AND NOT EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = d.channel_key AND w.from_at > d.at
                           AND NOT EXISTS (SELECT 1 FROM messages h WHERE h.channel_key = d.channel_key AND h.is_bot = 0 AND h.at > d.at AND h.at < w.from_at))
       ORDER BY d.at, d.id LIMIT ?`,
    )
    .all(pack.id, query.since ?? 0, query.policyId ?? null, query.policyId ?? null, query.limit ?? -1) as {
    id: number;
    channelKey: string;
    roundId: string;
    state: string;
    actions: string;
    probs: string;
    chosen: string;
    propensity: number;
    policyId: string;
    policyVersion: string;
    at: number;
    feedback: number | null;
  }[];
  const out: LoggedSet = { decisions: [], skipped: 0, problems: [] };
  const skip = (id: number, why: string) => {
    out.skipped++;
    if (out.problems.length < 5) out.problems.push(`decision ${id}: ${why}`);
  };
  for (const r of rows) {
    try {
      const actions = JSON.parse(r.actions) as string[];
      const probs = JSON.parse(r.probs) as number[];
      if (actions.join('|') !== slots.join('|')) {
        skip(r.id, 'logged with other action slots (the pack changed since)');
        continue;
      }
      const action = slots.indexOf(r.chosen);
      if (action < 0) throw new Error(`chosen action "${r.chosen}" is not a slot`);
      if (!(r.propensity > 0)) throw new Error(`propensity ${r.propensity} is not positive`);
      const rawState = JSON.parse(r.state) as unknown;
      out.decisions.push({
        id: r.id,
        channelKey: r.channelKey,
        roundId: r.roundId,
        state: stateFromLogged(pack, rawState),
        rawState,
        action,
        propensity: r.propensity,
        probabilities: probs,
        policyId: r.policyId,
        policyVersion: r.policyVersion,
        ...(r.feedback !== null ? { feedback: r.feedback } : {}),
        at: r.at,
      });
    } catch (err) {
      skip(r.id, (err as Error).message);
    }
  }
  return out;
}
