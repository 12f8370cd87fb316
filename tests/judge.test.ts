import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPacks } from '../src/persona/loader.ts';
import { JudgeAnswerError, JudgeRequestError, LlmJudge, parseJudgeAnswer } from '../src/reward/judge.ts';
import { RUBRIC_KEYS } from '../src/reward/rubric.ts';
import { startOpenAIServer, type Handler, type OpenAIServer } from './support/openai-server.ts';

const pack = loadPacks().get('support')!;
const persona = pack.personas.find((p) => p.id === 'anchor')!;
const context = [{ name: 'Sam', text: 'I moved abroad and feel so alone since my husband travels for work.', isBot: false }];
const candidates = ['It sounds lonely, being far from home with him away so much.', 'You should join a club.'];

const entry = (index: number, value = 4, extra: Record<string, unknown> = {}) => ({ index, ...Object.fromEntries(RUBRIC_KEYS.map((k) => [k, value])), ...extra });

describe('parseJudgeAnswer', () => {
  it('reads a valid answer, in candidate order, with rationales', () => {
    const raw = JSON.stringify({ candidates: [entry(2, 2), entry(1, 5, { rationale: 'warm and specific' })] });
    const out = parseJudgeAnswer(raw, 2);
    expect(out[0]!.scores.consistency).toBe(5);
    expect(out[0]!.rationale).toBe('warm and specific');
    expect(out[1]!.scores.relevance).toBe(2);
  });

  it('accepts a fenced or prefaced answer', () => {
    const json = JSON.stringify({ candidates: [entry(1)] });
    expect(parseJudgeAnswer('```json\n' + json + '\n```', 1)[0]!.scores.relevance).toBe(4);
    expect(parseJudgeAnswer('Here are the scores:\n' + json, 1)[0]!.scores.relevance).toBe(4);
  });

  it('names the field of a missing or wrong score', () => {
    const missing = entry(1) as Record<string, unknown>;
    delete missing.relevance;
    expect(() => parseJudgeAnswer(JSON.stringify({ candidates: [missing] }), 1)).toThrow('candidates.0.relevance: missing');
    expect(() => parseJudgeAnswer(JSON.stringify({ candidates: [entry(1, 7)] }), 1)).toThrow(/candidates\.0\.emotional_expressiveness: must be at most 5/);
    expect(() => parseJudgeAnswer(JSON.stringify({ candidates: [{ ...entry(1), consistency: 'high' }] }), 1)).toThrow(/candidates\.0\.consistency: must be a number from 1 to 5 \(got "high"\)/);
    expect(() => parseJudgeAnswer(JSON.stringify({ scores: [] }), 1)).toThrow(/^candidates: missing/);
  });

  it('rejects partial answers: cut-off JSON and missing candidates', () => {
    const full = JSON.stringify({ candidates: [entry(1), entry(2)] });
    const cut = full.slice(0, full.length - 40);
    expect(() => parseJudgeAnswer(cut, 2)).toThrow(/partial JSON/);
    expect(() => parseJudgeAnswer(cut, 2, 'length')).toThrow(/token limit/);
    expect(() => parseJudgeAnswer(JSON.stringify({ candidates: [entry(1)] }), 3)).toThrow('candidates: partial answer: scores for 1 of 3 candidates (missing 2, 3)');
  });

  it('rejects malformed JSON, prose, empty answers, duplicates and out-of-range indexes', () => {
    expect(() => parseJudgeAnswer('{"candidates": [1,, 2]}', 1)).toThrow(/malformed JSON/);
    expect(() => parseJudgeAnswer('I think both are fine.', 1)).toThrow(/not JSON/);
    expect(() => parseJudgeAnswer('', 1)).toThrow(/empty answer/);
    expect(() => parseJudgeAnswer(JSON.stringify({ candidates: [entry(1), entry(1)] }), 2)).toThrow('candidates.1.index: candidate 1 is scored twice');
    expect(() => parseJudgeAnswer(JSON.stringify({ candidates: [entry(4)] }), 1)).toThrow('candidates.0.index: must be between 1 and 1 (got 4)');
  });
});

describe('LlmJudge against an OpenAI-compatible server', () => {
  let server: OpenAIServer;
  let reply: Handler = () => 'unset';
  beforeAll(async () => {
    server = await startOpenAIServer((body, info) => reply(body, info));
  });
  afterAll(async () => server.close());

  const judge = () => new LlmJudge({ baseURL: server.url, apiKey: 'sk-test-not-a-secret', model: 'judge-model', retries: 0 });

  it('sends the rubric, persona card, conversation and candidates, and asks for JSON', async () => {
    reply = () => ({ json: { candidates: [entry(1, 5), entry(2, 2)] } });
    const before = server.chatRequests().length;
    const out = await judge().score({ pack, persona, context, candidates });
    expect(out.map((o) => o.scores.consistency)).toEqual([5, 2]);
    const body = server.chatRequests()[before]!.body!;
    expect(body.model).toBe('judge-model');
    expect(body.response_format).toEqual({ type: 'json_object' });
    const text = body.messages.map((m) => m.content).join('\n');
    for (const k of RUBRIC_KEYS) expect(text).toContain(k);
    expect(text).toContain('Anchor, the emotional validator');
    expect(text).toContain('Sam: I moved abroad');
    expect(text).toContain('<candidate index="2">You should join a club.</candidate>');
  });

  it('asks again after a malformed answer, quoting the error, and uses the second answer', async () => {
    let calls = 0;
    reply = () => (calls++ === 0 ? '{"candidates": [{"index": 1, "relevance": 4' : { json: { candidates: [entry(1), entry(2, 3)] } });
    const before = server.chatRequests().length;
    const out = await judge().score({ pack, persona, context, candidates });
    expect(out[1]!.scores.relevance).toBe(3);
    const retry = server.chatRequests()[before + 1]!.body!;
    expect(retry.messages.at(-1)!.content).toMatch(/partial JSON/);
  });

  it('gives up with a JudgeAnswerError naming the field when answers stay unusable', async () => {
    reply = () => ({ json: { candidates: [entry(1), { index: 2 }] } });
    await expect(judge().score({ pack, persona, context, candidates })).rejects.toThrow(JudgeAnswerError);
    await expect(judge().score({ pack, persona, context, candidates })).rejects.toThrow('candidates.1.emotional_expressiveness: missing');
  });

  it('reports HTTP failures with the host and status, never the key', async () => {
    reply = () => ({ status: 404, message: 'model judge-model not found' });
    const err = (await judge().score({ pack, persona, context, candidates }).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(JudgeRequestError);
    expect(err.message).toContain(new URL(server.url).host);
    expect(err.message).toContain('HTTP 404');
    expect(err.message).not.toContain('sk-test-not-a-secret');
  });

  it('a non-JSON HTTP body is a request error, not a crash', async () => {
    reply = () => ({ malformed: '{"choices": [' });
    await expect(judge().score({ pack, persona, context, candidates })).rejects.toThrow(/judge at 127\.0\.0\.1/);
  });
});
