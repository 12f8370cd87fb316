import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeuristicPolicy } from '../src/director/heuristic.ts';
import { LlmPolicy, parseDirective } from '../src/director/llm-policy.ts';
import { stateFromLogged } from '../src/learn/logged.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { createRng } from '../src/util/rng.ts';
import { lastUserText, startOpenAIServer, type OpenAIServer, type Reply } from './support/openai-server.ts';

const support = loadPacks().get('support')!;
const state = stateFromLogged(support, {
  human: 'I failed my driving test again and I feel stupid.',
  transcript: [{ name: 'Sam', personaId: null, text: 'I failed my driving test again and I feel stupid.' }],
  roundTurns: [],
  sessionStrategies: [],
  humanTurnCount: 1,
  personas: support.personas.map((p) => ({ id: p.id, talkativeness: p.talkativeness, strategies: p.strategies })),
  maxBotTurns: 2,
  floor: 0,
});

let reply: Reply = 'unset';
let server: OpenAIServer;
beforeAll(async () => {
  server = await startOpenAIServer(() => reply);
});
afterAll(() => server.close());

const policy = () => new LlmPolicy({ baseURL: server.url, model: 'director-test', timeoutMs: 2000, fallback: new HeuristicPolicy() });

describe('llm director', () => {
  it('turns a JSON directive into a logged decision with the model instruction', async () => {
    reply = { json: { action: 'speak', persona: 'anchor', strategy: 'reflection', instruction: 'Name the shame gently.', reason: 'they feel stupid' } };
    const d = await policy().decide(state, createRng(1));
    expect(d.policyId).toBe('llm');
    expect(d.policyVersion).toBe('director-test');
    expect(d.action).toEqual({ kind: 'speak', personaId: 'anchor', strategy: 'reflection' });
    expect(d.directive?.instruction).toBe('Name the shame gently.');
    expect(d.reason).toBe('they feel stupid');
    expect(d.propensity).toBe(1); // floor 0 in this state
    // The request carried the conversation, the allowed actions and asked for JSON.
    const body = server.chatRequests().at(-1)!.body!;
    expect(body.model).toBe('director-test');
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(lastUserText(body)).toContain('I failed my driving test again');
    expect(lastUserText(body)).toContain('Allowed now: anchor:reflection');
  });

  it('accepts yield', async () => {
    reply = { json: { action: 'yield', reason: 'let them talk' } };
    const d = await policy().decide(state, createRng(1));
    expect(d.action).toEqual({ kind: 'yield' });
  });

  it.each<[string, Reply, RegExp]>([
    ['prose', 'I think Anchor should reflect.', /answer is not JSON/],
    ['an action not allowed', { json: { action: 'speak', persona: 'anchor', strategy: 'suggestion' } }, /"anchor:suggestion" is not allowed now/],
    ['an unknown action kind', { json: { action: 'dance' } }, /"action" must be "speak" or "yield"/],
    ['a server error', { status: 503, message: 'overloaded' }, /model endpoint error 503/],
  ])('falls back to the heuristic for %s, saying why', async (_name, r, why) => {
    reply = r;
    const d = await policy().decide(state, createRng(1));
    expect(d.policyId).toBe('heuristic');
    expect(d.reason).toMatch(why);
  });

  it('falls back when the model does not answer in time', async () => {
    reply = { hang: true };
    const slow = new LlmPolicy({ baseURL: server.url, model: 'director-test', timeoutMs: 200, fallback: new HeuristicPolicy() });
    const d = await slow.decide(state, createRng(1));
    expect(d.policyId).toBe('heuristic');
    expect(d.reason).toMatch(/no answer within 200 ms/);
  });

  it('parses fenced JSON and lower-cases ids', () => {
    expect(parseDirective('```json\n{"action":"speak","persona":"Guide","strategy":"Suggestion"}\n```', ['guide:suggestion', 'yield'])).toEqual({
      action: { kind: 'speak', personaId: 'guide', strategy: 'suggestion' },
    });
  });
});
