// The reward of a logged decision, for off-policy evaluation: the group reward of what actually
// followed it, scored like a simulated block. The block is the decision's own turn and the rest
// of its round, then the person's next message. A real person's engagement is not observed, so it
// is read from what they did next (documented in docs/learning.md):
//   no reply in the channel afterwards                 0.3   (they left)
//   a reply asking for space ("stop", "too many")      0.1
//   a reply saying it helped ("thanks", "that helps")  0.9
//   any other reply                                    0.6
// and mixed with their explicit feedback on the round (reactions, ratings mapped to [-1, 1]) when
// there is some: engagement = (1 - w) * proxy + w * (feedback + 1) / 2.
import type { Turn } from '../core/types.ts';
import { affectOf } from '../director/affect.ts';
import { groupReward, type FidelityScorer, type RewardWeights } from '../eval/group-reward.ts';
import type { Pack } from '../persona/schema.ts';
import type { Db } from '../store/db.ts';
import type { LoggedDecision } from './logged.ts';

export const ENGAGEMENT_PROXY = { left: 0.3, wantsSpace: 0.1, feelsHeard: 0.9, replied: 0.6 } as const;

interface MessageRow {
  id: number;
  platformId: string;
  authorName: string;
  isBot: number;
  personaId: string | null;
  text: string;
  strategy: string | null;
  decisionId: number | null;
  roundId: string | null;
  at: number;
}

export function engagementProxy(nextHuman: string | undefined): number {
  if (nextHuman === undefined) return ENGAGEMENT_PROXY.left;
  const affect = affectOf(nextHuman);
  if (affect.wantsSpace) return ENGAGEMENT_PROXY.wantsSpace;
  if (affect.feelsHeard) return ENGAGEMENT_PROXY.feelsHeard;
  return ENGAGEMENT_PROXY.replied;
}

/** Reward of each logged decision (same order), from the messages that followed it. */
export async function loggedRewards(
  db: Db,
  pack: Pack,
  decisions: readonly LoggedDecision[],
  options: { feedbackWeight?: number; weights?: Partial<RewardWeights>; fidelity?: FidelityScorer } = {},
): Promise<number[]> {
  const w = options.feedbackWeight ?? 0.5;
  const byChannel = new Map<string, MessageRow[]>();
  const messagesOf = (channel: string) => {
    let rows = byChannel.get(channel);
    if (!rows) {
      rows = db
        .prepare(
          `SELECT id, platform_id AS platformId, author_name AS authorName, is_bot AS isBot, persona_id AS personaId, text, strategy,
                  decision_id AS decisionId, round_id AS roundId, at
           FROM messages WHERE channel_key = ? ORDER BY at, id`,
        )
        .all(channel) as MessageRow[];
      byChannel.set(channel, rows);
    }
    return rows;
  };
  const turnIndex = new Map<number, number>(
    (db.prepare('SELECT id, turn_index AS k FROM decisions').all() as { id: number; k: number }[]).map((r) => [r.id, r.k]),
  );

  const rewards: number[] = [];
  for (const d of decisions) {
    const rows = messagesOf(d.channelKey);
    const k = turnIndex.get(d.id) ?? 0;
    // This decision's turn and the later turns of its round.
    const block = rows.filter((m) => m.isBot === 1 && m.roundId === d.roundId && m.decisionId !== null && (turnIndex.get(m.decisionId) ?? 0) >= k);
    const roundRows = rows.filter((m) => m.roundId === d.roundId);
    // The round ends with its last message; the person's next message follows it.
    const lastOfRound = roundRows.length ? Math.max(...roundRows.map((m) => rows.indexOf(m))) : rows.findIndex((m) => m.platformId === triggerOf(db, d.id));
    const nextHuman = lastOfRound >= 0 ? rows.slice(lastOfRound + 1).find((m) => m.isBot === 0) : undefined;
    let engagement = engagementProxy(nextHuman?.text);
    if (d.feedback !== undefined) engagement = (1 - w) * engagement + w * ((d.feedback + 1) / 2);
    const turns: Turn[] = [...block, ...(nextHuman ? [nextHuman] : [])].map(toTurn);
    const breakdown = await groupReward({ pack, personas: d.state.personas, context: d.state.transcript, turns, engagement }, { weights: options.weights, fidelity: options.fidelity });
    rewards.push(breakdown.total);
  }
  return rewards;
}

function triggerOf(db: Db, decisionId: number): string | undefined {
  return db.prepare('SELECT trigger_id FROM decisions WHERE id = ?').pluck().get(decisionId) as string | undefined;
}

function toTurn(m: MessageRow): Turn {
  return {
    messageId: m.platformId,
    author: { id: m.personaId ?? m.authorName, name: m.authorName, isBot: m.isBot === 1, ...(m.personaId ? { personaId: m.personaId } : {}) },
    text: m.text,
    at: m.at,
    ...(m.strategy ? { strategy: m.strategy } : {}),
  };
}
