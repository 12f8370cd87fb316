// The llm judge of `mascot eval --judge llm`: a model behind an OpenAI-compatible API scores a whole
// simulated conversation on the MASCOT paper's rubric, each criterion 1-5:
//   agent level, for every companion turn: Emotional Expressiveness, Empathetic Support Quality,
//     Consistency, Response Relevance, Social Contribution (the criteria of src/reward/rubric.ts)
//   collective, for the conversation: Fidelity, Originality, Relevance, Engagement, Overall
// It asks for structured JSON and validates it field by field (llm-json.ts): a malformed, partial or
// incomplete answer is an LlmAnswerError that says which field is wrong and why. Scores are reported
// on the paper's 0-100 scale: (s - 1) / 4 * 100, agent-level scores averaged over the turns.
import type OpenAI from 'openai';
import { z } from 'zod';
import type { Turn } from '../core/types.ts';
import type { Pack } from '../persona/schema.ts';
import { RUBRIC, RUBRIC_KEYS } from '../reward/rubric.ts';
import type { Scenario } from '../sim/scenario.ts';
import { askJson, clientFor, LlmAnswerError, readJsonAnswer, type LlmEndpoint } from './llm-json.ts';
import type { Metric } from './runner.ts';

export const COLLECTIVE = [
  { key: 'fidelity', label: 'Fidelity', question: "Does every companion stay in its own persona's role and voice throughout?" },
  { key: 'originality', label: 'Originality', question: 'Do the companions add something new each time, rather than echoing each other or themselves?' },
  { key: 'relevance', label: 'Relevance', question: 'Does the group respond to what the person (or the team) actually said?' },
  { key: 'engagement', label: 'Engagement', question: 'Does the person stay engaged and open up, or withdraw, push back or leave?' },
  { key: 'overall', label: 'Overall', question: 'Overall, how well did the group help: heard first, then helped to think, then one step (or, in a meeting, to decisions with owners)?' },
] as const;
export type CollectiveKey = (typeof COLLECTIVE)[number]['key'];

/** Report columns of the judge: agent-level first, then collective. */
export const JUDGE_METRICS: Metric[] = [
  ...RUBRIC.map((c) => ({ key: `agent_${c.key}`, label: c.label, better: 'higher' as const, group: 'agent' as const })),
  ...COLLECTIVE.map((c) => ({ key: `judge_${c.key}`, label: `${c.label} (judge)`, better: 'higher' as const, group: 'judged' as const })),
];

export type JudgeScores = Record<string, number | null>;

export interface ConversationJudgeInput {
  pack: Pack;
  scenario: Scenario;
  transcript: Turn[];
}

export interface ConversationJudge {
  readonly name: string;
  readonly metrics: Metric[];
  /** Metric key -> score on 0-100. */
  score(input: ConversationJudgeInput): Promise<JudgeScores>;
}

const rating = z
  .number({ error: (i) => (i.input === undefined ? 'missing' : `must be a number from 1 to 5 (got ${JSON.stringify(i.input)})`) })
  .min(1, 'must be at least 1')
  .max(5, 'must be at most 5');

const turnSchema = z.object({
  turn: z.number({ error: (i) => (i.input === undefined ? 'missing' : `must be the turn number (got ${JSON.stringify(i.input)})`) }).int('must be a whole number'),
  ...Object.fromEntries(RUBRIC_KEYS.map((k) => [k, rating])),
});

const answerSchema = z.object({
  turns: z.array(turnSchema, { error: (i) => (i.input === undefined ? 'missing' : 'must be an array with one entry per companion turn') }),
  collective: z.object(Object.fromEntries(COLLECTIVE.map((c) => [c.key, rating])), { error: (i) => (i.input === undefined ? 'missing' : 'must be an object') }),
});

export interface Judgement {
  /** Companion turn number (1-based position in the transcript) -> criterion -> 1..5. */
  turns: Map<number, Record<string, number>>;
  collective: Record<CollectiveKey, number>;
}

/** Parse a judge answer for a transcript whose companion turns have the given numbers. */
export function parseJudgement(content: string | null | undefined, botTurnNumbers: readonly number[], finishReason?: string | null): Judgement {
  const answer = readJsonAnswer('judge answer', content, answerSchema, finishReason);
  const raw = content ?? '';
  const turns = new Map<number, Record<string, number>>();
  answer.turns.forEach((t, i) => {
    if (!botTurnNumbers.includes(t.turn)) throw new LlmAnswerError('judge answer', `turns.${i}.turn`, `${t.turn} is not a companion turn (companion turns: ${botTurnNumbers.join(', ')})`, raw);
    if (turns.has(t.turn)) throw new LlmAnswerError('judge answer', `turns.${i}.turn`, `turn ${t.turn} is scored twice`, raw);
    turns.set(t.turn, Object.fromEntries(RUBRIC_KEYS.map((k) => [k, (t as Record<string, number>)[k]!])));
  });
  const missing = botTurnNumbers.filter((n) => !turns.has(n));
  if (missing.length > 0) throw new LlmAnswerError('judge answer', 'turns', `partial answer: ${turns.size} of ${botTurnNumbers.length} companion turns scored (missing turn ${missing.join(', ')})`, raw);
  return { turns, collective: answer.collective as Record<CollectiveKey, number> };
}

/** The judge's instructions and the numbered transcript. */
export function judgeMessages(input: ConversationJudgeInput): OpenAI.ChatCompletionMessageParam[] {
  const { pack, scenario, transcript } = input;
  const system = [
    `You are an impartial judge of a group conversation in which several AI companions (${pack.name}) talk with ${scenario.kind === 'meeting' ? 'a team in a meeting thread' : 'a person'}.`,
    'Score every companion turn on each criterion from 1 (poor) to 5 (excellent):',
    ...RUBRIC.map((c) => `- ${c.key} (${c.label}): ${c.question}`),
    'Then score the conversation as a whole, each from 1 to 5:',
    ...COLLECTIVE.map((c) => `- ${c.key} (${c.label}): ${c.question}`),
    'Answer with JSON only, exactly this shape, with one entry for every companion turn (by its number):',
    `{"turns": [{"turn": 2, ${RUBRIC_KEYS.map((k) => `"${k}": 4`).join(', ')}}], "collective": {${COLLECTIVE.map((c) => `"${c.key}": 4`).join(', ')}}}`,
  ].join('\n');
  const situation = scenario.kind === 'meeting' ? `Meeting agenda: ${scenario.agenda}` : `Situation: ${scenario.situation} What they need: ${scenario.need}`;
  const personas = pack.personas.map((p) => `- ${p.displayName}: the ${p.role}; strategies: ${p.strategies.join(', ')}`);
  const lines = transcript.map((t, i) =>
    t.author.isBot ? `[${i + 1}] ${t.author.name} (companion, strategy: ${t.strategy ?? 'unknown'}): ${flat(t.text)}` : `[${i + 1}] ${t.author.name}: ${flat(t.text)}`,
  );
  const user = [situation, '', 'The companions:', ...personas, '', 'The conversation:', '<conversation>', ...lines, '</conversation>'].join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

export class LlmConversationJudge implements ConversationJudge {
  readonly name: string;
  readonly metrics = JUDGE_METRICS;
  private readonly client: OpenAI;

  constructor(
    private readonly endpoint: LlmEndpoint,
    private readonly answerRetries = 1,
  ) {
    this.name = `llm judge (${endpoint.model})`;
    this.client = clientFor(endpoint);
  }

  async score(input: ConversationJudgeInput): Promise<JudgeScores> {
    const botTurns = input.transcript.flatMap((t, i) => (t.author.isBot ? [i + 1] : []));
    const judgement = await askJson(this.client, this.endpoint, judgeMessages(input), (content, finish) => parseJudgement(content, botTurns, finish), { answerRetries: this.answerRetries });
    return judgementScores(judgement);
  }
}

/** 1-5 ratings to the report's 0-100 scale; agent-level criteria averaged over the companion turns. */
export function judgementScores(j: Judgement): JudgeScores {
  const to100 = (s: number) => ((s - 1) / 4) * 100;
  const scores: JudgeScores = {};
  for (const k of RUBRIC_KEYS) {
    const values = [...j.turns.values()].map((t) => t[k]!);
    scores[`agent_${k}`] = values.length > 0 ? values.reduce((a, b) => a + to100(b), 0) / values.length : null;
  }
  for (const c of COLLECTIVE) scores[`judge_${c.key}`] = to100(j.collective[c.key]);
  return scores;
}

function flat(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
