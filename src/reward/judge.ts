// Judges score candidate turns of one persona in one context on the paper's rubric (1-5 each).
// The LLM judge asks any OpenAI-compatible model for structured JSON through the official SDK and
// validates the answer field by field: malformed, partial or incomplete answers become a
// JudgeAnswerError that says which field is wrong and why, and the judge asks again (once by
// default) quoting that error before giving up on the item.
import OpenAI from 'openai';
import { z } from 'zod';
import type { Pack, Persona } from '../persona/schema.ts';
import { RUBRIC, RUBRIC_KEYS, type ContextTurn, type RubricScores } from './rubric.ts';
import { createOpenAIClient, hostOf } from '../speaker/openai-client.ts';
import { closes, snippet } from '../eval/llm-json.ts';

export interface JudgeInput {
  pack: Pack;
  persona: Persona;
  context: ContextTurn[];
  candidates: string[];
  signal?: AbortSignal;
}

export interface JudgedCandidate {
  scores: RubricScores;
  rationale?: string;
}

export interface Judge {
  /** 'offline-rubric' or the judge model's name: stored with every score. */
  readonly name: string;
  /** One result per candidate, in order. */
  score(input: JudgeInput): Promise<JudgedCandidate[]>;
}

/** The judge's answer could not be used; `field` names what is wrong ("candidates.2.relevance"). */
export class JudgeAnswerError extends Error {
  constructor(
    message: string,
    readonly field: string,
    readonly raw: string,
  ) {
    super(field ? `${field}: ${message}` : message);
    this.name = 'JudgeAnswerError';
  }
}

/** The judge endpoint failed (unreachable, HTTP error, timeout). */
export class JudgeRequestError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JudgeRequestError';
  }
}

const score = z.number({ error: (i) => (i.input === undefined ? 'missing' : `must be a number from 1 to 5 (got ${JSON.stringify(i.input)})`) }).min(1, 'must be at least 1').max(5, 'must be at most 5');

const candidateSchema = z.object({
  index: z.number({ error: (i) => (i.input === undefined ? 'missing' : `must be the candidate number (got ${JSON.stringify(i.input)})`) }).int('must be a whole number'),
  emotional_expressiveness: score,
  empathetic_support: score,
  consistency: score,
  relevance: score,
  social_contribution: score,
  rationale: z.string().optional(),
}) satisfies z.ZodType<{ index: number; rationale?: string } & RubricScores>;

const answerSchema = z.object({
  candidates: z.array(candidateSchema, { error: (i) => (i.input === undefined ? 'missing' : 'must be an array with one entry per candidate') }),
});

/**
 * Parse a judge's answer for `count` candidates. Accepts the JSON object alone, wrapped in a
 * markdown fence, or after a line of prose; anything else is a JudgeAnswerError naming the field.
 */
export function parseJudgeAnswer(content: string | null | undefined, count: number, finishReason?: string | null): JudgedCandidate[] {
  const raw = content ?? '';
  const text = raw.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  if (text.length === 0) throw new JudgeAnswerError('the judge returned an empty answer', '', raw);
  const start = text.indexOf('{');
  if (start < 0) throw new JudgeAnswerError(`not JSON: expected an object, got "${snippet(text)}"`, '', raw);
  const end = text.lastIndexOf('}');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(start, end + 1 > start ? end + 1 : undefined));
  } catch (err) {
    if (finishReason === 'length' || !closes(text.slice(start)))
      throw new JudgeAnswerError(
        `partial JSON: the answer stops after ${text.length} characters${finishReason === 'length' ? ' (the judge hit its token limit; raise MASCOT_JUDGE_MAX_TOKENS)' : ''}: "...${text.slice(-60)}"`,
        '',
        raw,
      );
    throw new JudgeAnswerError(`malformed JSON: ${(err as Error).message}`, '', raw);
  }
  const result = answerSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new JudgeAnswerError(issue.message, issue.path.map(String).join('.'), raw);
  }
  const byIndex = new Map<number, (typeof result.data.candidates)[number]>();
  result.data.candidates.forEach((c, i) => {
    if (c.index < 1 || c.index > count) throw new JudgeAnswerError(`must be between 1 and ${count} (got ${c.index})`, `candidates.${i}.index`, raw);
    if (byIndex.has(c.index)) throw new JudgeAnswerError(`candidate ${c.index} is scored twice`, `candidates.${i}.index`, raw);
    byIndex.set(c.index, c);
  });
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  if (missing.length > 0)
    throw new JudgeAnswerError(`partial answer: scores for ${byIndex.size} of ${count} candidates (missing ${missing.join(', ')})`, 'candidates', raw);
  return Array.from({ length: count }, (_, i) => {
    const c = byIndex.get(i + 1)!;
    const scores = Object.fromEntries(RUBRIC_KEYS.map((k) => [k, c[k]])) as RubricScores;
    return c.rationale ? { scores, rationale: c.rationale } : { scores };
  });
}


/** The judge's instructions: the rubric, the persona card and the exact JSON shape. */
export function judgeMessages(input: JudgeInput): OpenAI.ChatCompletionMessageParam[] {
  const { pack, persona, context, candidates } = input;
  const strategies = persona.strategies.map((s) => `${s} (${pack.strategies[s]?.label ?? s})`).join(', ');
  const system = [
    'You are an impartial judge of turns written by one persona in a multi-persona group conversation.',
    'Score every candidate turn on each criterion from 1 (poor) to 5 (excellent):',
    ...RUBRIC.map((c) => `- ${c.key} (${c.label}): ${c.question}`),
    'Judge the turn as this persona\'s turn: a good turn written in another persona\'s voice or doing another persona\'s job scores low on consistency.',
    'Answer with JSON only, exactly this shape, one entry per candidate:',
    `{"candidates": [{"index": 1, ${RUBRIC_KEYS.map((k) => `"${k}": 4`).join(', ')}, "rationale": "one short sentence"}]}`,
  ].join('\n');
  const card = [
    `Persona: ${persona.displayName}, the ${persona.role} (${pack.name}).`,
    persona.description.trim(),
    `Voice: ${persona.voice.join(' ')}`,
    persona.never.length > 0 ? `Never: ${persona.never.join(' ')}` : '',
    `Strategies: ${strategies}.`,
  ].filter(Boolean);
  const conversation = context.map((t) => `${t.name}: ${t.text.replace(/\s+/g, ' ').trim()}`).join('\n');
  const user = [
    ...card,
    '',
    'Conversation so far:',
    '<conversation>',
    conversation,
    '</conversation>',
    '',
    `Candidate next turns by ${persona.displayName}:`,
    ...candidates.map((c, i) => `<candidate index="${i + 1}">${c.replace(/\s+/g, ' ').trim()}</candidate>`),
  ].join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

export interface LlmJudgeOptions {
  baseURL: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
  /** Transport retries (5xx, connection errors), handled by the SDK. */
  retries?: number;
  /** How often to ask again after an unusable answer. */
  answerRetries?: number;
  maxTokens?: number;
}

export class LlmJudge implements Judge {
  readonly name: string;
  private readonly client: OpenAI;
  private readonly host: string;

  constructor(private readonly options: LlmJudgeOptions) {
    this.name = options.model;
    this.host = hostOf(options.baseURL);
    this.client = createOpenAIClient({ baseURL: options.baseURL, apiKey: options.apiKey, timeoutMs: options.timeoutMs ?? 60_000, retries: options.retries ?? 2 });
  }

  async score(input: JudgeInput): Promise<JudgedCandidate[]> {
    if (input.candidates.length === 0) return [];
    const messages = judgeMessages(input);
    const attempts = 1 + (this.options.answerRetries ?? 1);
    let lastError: JudgeAnswerError | undefined;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const completion = await this.complete(messages, input.signal);
      const choice = completion.choices[0];
      const content = choice?.message.content ?? '';
      try {
        return parseJudgeAnswer(content, input.candidates.length, choice?.finish_reason);
      } catch (err) {
        if (!(err instanceof JudgeAnswerError)) throw err;
        lastError = err;
        messages.push({ role: 'assistant', content }, { role: 'user', content: `That answer cannot be used (${err.message}). Answer again with the JSON object only, scoring all ${input.candidates.length} candidates.` });
      }
    }
    throw lastError!;
  }

  private async complete(messages: OpenAI.ChatCompletionMessageParam[], signal?: AbortSignal): Promise<OpenAI.ChatCompletion> {
    try {
      return await this.client.chat.completions.create(
        { model: this.options.model, messages, temperature: 0, max_tokens: this.options.maxTokens ?? 800, response_format: { type: 'json_object' } },
        { signal },
      );
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const status = err instanceof OpenAI.APIError && err.status ? ` (HTTP ${err.status})` : '';
      throw new JudgeRequestError(`judge at ${this.host} failed${status}: ${(err as Error).message}`, { cause: err });
    }
  }
}

