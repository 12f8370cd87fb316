// Structured JSON from any OpenAI-compatible model through the official SDK, for the llm judge and
// the llm simulated user. The answer is read leniently (a bare object, a fenced block, or an object
// after a line of prose) and validated strictly with zod: a malformed, partial or incomplete answer
// is an LlmAnswerError naming the field and why; the model is asked again once, quoting that error.
import OpenAI from 'openai';
import type { z } from 'zod';
import { createOpenAIClient, hostOf } from '../speaker/openai-client.ts';

export interface LlmEndpoint {
  baseURL: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
  /** Transport retries (connection errors, 429, 5xx), by the SDK. */
  retries?: number;
  maxTokens?: number;
}

/** The model's answer cannot be used; `field` names what is wrong ("collective.overall"), '' for the whole answer. */
export class LlmAnswerError extends Error {
  constructor(
    readonly what: string,
    readonly field: string,
    message: string,
    readonly raw: string,
  ) {
    super(`${what}: ${field ? `${field}: ` : ''}${message}`);
    this.name = 'LlmAnswerError';
  }
}

/** The endpoint itself failed (unreachable, HTTP error, timeout). */
export class LlmRequestError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LlmRequestError';
  }
}

/** Parse and validate one JSON answer. `what` names the answer in errors ("judge answer"). */
export function readJsonAnswer<T>(what: string, content: string | null | undefined, schema: z.ZodType<T>, finishReason?: string | null): T {
  const raw = content ?? '';
  const text = raw.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  if (!text) throw new LlmAnswerError(what, '', 'the answer is empty', raw);
  const start = text.indexOf('{');
  if (start < 0) throw new LlmAnswerError(what, '', `not JSON: expected an object, got "${snippet(text)}"`, raw);
  const end = text.lastIndexOf('}');
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end > start ? end + 1 : undefined));
  } catch (err) {
    if (finishReason === 'length' || end < start || !closes(text.slice(start)))
      throw new LlmAnswerError(what, '', `partial JSON: the answer stops after ${text.length} characters${finishReason === 'length' ? ' (the token limit was reached)' : ''}: "...${text.slice(-50)}"`, raw);
    throw new LlmAnswerError(what, '', `malformed JSON: ${(err as Error).message}`, raw);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new LlmAnswerError(what, issue.path.map(String).join('.'), issue.message, raw);
  }
  return parsed.data;
}

export function clientFor(endpoint: LlmEndpoint): OpenAI {
  return createOpenAIClient({ baseURL: endpoint.baseURL, apiKey: endpoint.apiKey, timeoutMs: endpoint.timeoutMs ?? 60_000, retries: endpoint.retries ?? 2 });
}

/**
 * Ask for a JSON object and parse it with `parse` (which throws LlmAnswerError on a bad answer).
 * After a bad answer the model sees its answer and the error and is asked again, `answerRetries` times.
 */
export async function askJson<T>(
  client: OpenAI,
  endpoint: LlmEndpoint,
  messages: OpenAI.ChatCompletionMessageParam[],
  parse: (content: string, finishReason: string | null | undefined) => T,
  options: { answerRetries?: number; temperature?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const history = [...messages];
  const attempts = 1 + (options.answerRetries ?? 1);
  let last: LlmAnswerError | undefined;
  for (let attempt = 0; attempt < attempts; attempt++) {
    let completion: OpenAI.ChatCompletion;
    try {
      completion = await client.chat.completions.create(
        { model: endpoint.model, messages: history, temperature: options.temperature ?? 0, max_tokens: endpoint.maxTokens ?? 800, response_format: { type: 'json_object' } },
        { signal: options.signal },
      );
    } catch (err) {
      const status = err instanceof OpenAI.APIError && err.status ? ` (HTTP ${err.status})` : '';
      throw new LlmRequestError(`${hostOf(endpoint.baseURL)} failed${status}: ${(err as Error).message}`, { cause: err });
    }
    const choice = completion.choices[0];
    const content = choice?.message.content ?? '';
    try {
      return parse(content, choice?.finish_reason);
    } catch (err) {
      if (!(err instanceof LlmAnswerError)) throw err;
      last = err;
      history.push({ role: 'assistant', content }, { role: 'user', content: `That answer cannot be used (${err.message}). Answer again with the complete JSON object only.` });
    }
  }
  throw last!;
}

export function snippet(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}

/** Do the braces and brackets outside strings close? (An answer cut off mid-way leaves them open.) */
export function closes(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') depth--;
  }
  return depth <= 0 && !inString;
}

