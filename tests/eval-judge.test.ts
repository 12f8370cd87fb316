import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Turn } from '../src/core/types.ts';
import { JUDGE_METRICS, LlmConversationJudge, parseJudgement } from '../src/eval/judge.ts';
import { LlmAnswerError, LlmRequestError } from '../src/eval/llm-json.ts';
import { runEvaluation } from '../src/eval/runner.ts';
import { DEFAULT_REWARD_WEIGHTS } from '../src/eval/group-reward.ts';
import { loadConfig } from '../src/config.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { LlmUser } from '../src/sim/llm-user.ts';
import { loadProfiles, loadSuite } from '../src/sim/scenario.ts';
import { lastUserText, messageText, startOpenAIServer, type ChatRequestBody, type OpenAIServer, type Reply } from './support/openai-server.ts';

const packs = loadPacks();
const support = packs.get('support')!;
const suite = loadSuite('support');
const scenario = suite.scenarios[0]!;
const profiles = loadProfiles();

const turn = (i: number, bot: boolean, text: string): Turn =>
  bot
    ? { messageId: `m${i}`, author: { id: 'anchor', name: 'Anchor', isBot: true, personaId: 'anchor' }, text, at: i, strategy: 'reflection' }
    : { messageId: `m${i}`, author: { id: 'sim-sam', name: 'Sam', isBot: false }, text, at: i };
const transcript = [turn(0, false, scenario.opening), turn(1, true, 'That sounds like a big moment.'), turn(2, false, 'It is!'), turn(3, true, 'What does it mean to you?')];

const ratings = (v: number) => ({ emotional_expressiveness: v, empathetic_support: v, consistency: v, relevance: v, social_contribution: v });
const good = { turns: [{ turn: 2, ...ratings(5) }, { turn: 4, ...ratings(3) }], collective: { fidelity: 4, originality: 4, relevance: 3, engagement: 5, overall: 4 } };

/** A server whose answers come from a queue, one per chat completion. */
async function scripted(replies: Reply[]): Promise<OpenAIServer> {
  return startOpenAIServer(() => replies.shift() ?? { status: 500, message: 'no more scripted answers' });
}

describe('llm judge', () => {
  let server: OpenAIServer | undefined;
  afterAll(async () => server?.close());
  const judgeOn = (s: OpenAIServer) => new LlmConversationJudge({ baseURL: s.url, model: 'judge-model', retries: 0 });

  it('scores a conversation on the paper rubric through the OpenAI-compatible client', async () => {
    server = await scripted([{ json: good }]);
    const scores = await judgeOn(server).score({ pack: support, scenario, transcript });
    // (s - 1) / 4 * 100, agent level averaged over companion turns: (100 + 50) / 2.
    expect(scores.agent_consistency).toBe(75);
    expect(scores.judge_overall).toBe(75);
    expect(scores.judge_engagement).toBe(100);
    expect(Object.keys(scores).sort()).toEqual(JUDGE_METRICS.map((m) => m.key).sort());
    const body = server.chatRequests()[0]!.body as ChatRequestBody;
    expect(body.model).toBe('judge-model');
    expect(body.response_format).toEqual({ type: 'json_object' });
    const system = messageText(body.messages[0]!.content);
    for (const label of ['Emotional Expressiveness', 'Empathetic Support Quality', 'Consistency', 'Response Relevance', 'Social Contribution', 'Fidelity', 'Originality', 'Engagement', 'Overall']) expect(system).toContain(label);
    expect(lastUserText(body)).toContain('[2] Anchor (companion, strategy: reflection): That sounds like a big moment.');
    await server.close();
    server = undefined;
  });

  it('asks again after a malformed answer, quoting the error', async () => {
    server = await scripted([{ texts: ['Sure! Here are my scores: great job everyone.'] }, { json: good }]);
    const scores = await judgeOn(server).score({ pack: support, scenario, transcript });
    expect(scores.judge_fidelity).toBe(75);
    const retry = server.chatRequests()[1]!.body as ChatRequestBody;
    expect(lastUserText(retry)).toMatch(/cannot be used \(judge answer: not JSON: expected an object/);
    await server.close();
    server = undefined;
  });

  it('rejects malformed JSON with a clear error once the retry is spent', async () => {
    server = await scripted([{ texts: ['{"turns": [1,,2]}'] }, { texts: ['{"turns": [1,,2]}'] }]);
    await expect(judgeOn(server).score({ pack: support, scenario, transcript })).rejects.toThrow(/judge answer: malformed JSON/);
    await server.close();
    server = undefined;
  });

  it('reports an unreachable or failing endpoint as a request error', async () => {
    server = await scripted([{ status: 503, message: 'overloaded' }]);
    const err = await judgeOn(server).score({ pack: support, scenario, transcript }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmRequestError);
    expect((err as Error).message).toMatch(/127\.0\.0\.1:\d+ failed \(HTTP 503\)/);
    await server.close();
    server = undefined;
  });
});

describe('judge answers', () => {
  const parse = (value: unknown) => () => parseJudgement(typeof value === 'string' ? value : JSON.stringify(value), [2, 4]);
  const fieldOf = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      return err instanceof LlmAnswerError ? `${err.field} | ${err.message}` : `not an answer error: ${(err as Error).message}`;
    }
    return 'accepted';
  };

  it('accepts a fenced answer after a line of prose', () => {
    expect(parse(`Here you go:\n\`\`\`json\n${JSON.stringify(good)}\n\`\`\``)().collective.overall).toBe(4);
  });

  it('names the field and why for partial or invalid answers', () => {
    expect(fieldOf(parse({ ...good, collective: { ...good.collective, overall: undefined } }))).toMatch(/^collective\.overall \| .*collective\.overall: missing/);
    expect(fieldOf(parse({ ...good, turns: [{ turn: 2, ...ratings(5), consistency: 7 }, good.turns[1]] }))).toMatch(/^turns\.0\.consistency \| .*must be at most 5/);
    expect(fieldOf(parse({ ...good, turns: [{ turn: 2, ...ratings(5), relevance: 'high' }, good.turns[1]] }))).toMatch(/turns\.0\.relevance \| .*must be a number from 1 to 5 \(got "high"\)/);
    expect(fieldOf(parse({ ...good, turns: [good.turns[0]] }))).toMatch(/^turns \| .*partial answer: 1 of 2 companion turns scored \(missing turn 4\)/);
    expect(fieldOf(parse({ ...good, turns: [...good.turns, { turn: 3, ...ratings(4) }] }))).toMatch(/^turns\.2\.turn \| .*3 is not a companion turn/);
    expect(fieldOf(parse({ ...good, turns: [good.turns[0], good.turns[0]] }))).toMatch(/turn 2 is scored twice/);
    expect(fieldOf(parse({ turns: good.turns }))).toMatch(/^collective \| .*missing/);
    expect(fieldOf(parse('{"turns": [{"turn": 2, "emotional_expr'))).toMatch(/^ \| judge answer: partial JSON: the answer stops/);
    expect(fieldOf(parse(''))).toMatch(/the answer is empty/);
  });
});

describe('llm simulated user', () => {
  let server: OpenAIServer;
  beforeAll(async () => {
    // Plays the person: answers as Sam, or leaves when told the companions rushed.
    server = await startOpenAIServer((body) => {
      const prompt = lastUserText(body);
      const system = messageText(body.messages[0]!.content);
      if (system.includes('impartial judge')) {
        const turns = [...prompt.matchAll(/^\[(\d+)\] [^:]+\(companion/gm)].map((m) => ({ turn: Number(m[1]), ...ratings(4) }));
        return { json: { turns, collective: { fidelity: 4, originality: 3, relevance: 4, engagement: 4, overall: 4 } } };
      }
      return { json: { messages: [{ speaker: 'Sam', text: 'Thanks, that helps. I think I will tell my family tonight.' }], engagement: 4, end: prompt.split('\n').length > 6 ? 'resolved' : 'no' } };
    });
  });
  afterAll(async () => server.close());

  it('answers through the client with the scenario and profile in its instructions', async () => {
    const user = new LlmUser(scenario, profiles[3]!, { baseURL: server.url, model: 'user-model', retries: 0 });
    const reply = await user.respond({ pack: support, history: transcript, human: transcript[2]!, botTurns: [transcript[3]!] });
    expect(reply.lines).toEqual([{ speaker: { id: 'sim-sam', name: 'Sam' }, text: 'Thanks, that helps. I think I will tell my family tonight.' }]);
    expect(reply.engagement).toBe(0.75);
    const body = server.chatRequests().at(-1)!.body as ChatRequestBody;
    const system = messageText(body.messages[0]!.content);
    expect(system).toContain(scenario.kind === 'support' ? scenario.situation : '');
    expect(system).toContain(profiles[3]!.label);
    expect(lastUserText(body)).toContain('Anchor (companion): What does it mean to you?');
  });

  it('rejects an answer in someone else\'s name', () => {
    const user = new LlmUser(scenario, profiles[0]!, { baseURL: server.url, model: 'user-model' });
    expect(() => user.parse(JSON.stringify({ messages: [{ speaker: 'Anchor', text: 'hi' }], engagement: 3, end: 'no' }))).toThrow(/simulated user answer: messages\.0\.speaker: "Anchor" is not one of Sam/);
    expect(() => user.parse(JSON.stringify({ messages: [{ speaker: 'Sam', text: 'hi' }], engagement: 3, end: 'maybe' }))).toThrow(/end: must be "no", "resolved" or "left" \(got "maybe"\)/);
  });

  it('runs an evaluation with the llm user and the llm judge', async () => {
    const endpoint = { baseURL: server.url, model: 'm', retries: 0 };
    const results = await runEvaluation({
      suites: [{ ...suite, scenarios: suite.scenarios.slice(0, 2) }],
      packs,
      policies: ['heuristic'],
      ablations: [],
      seeds: [1],
      profiles,
      weights: { ...DEFAULT_REWARD_WEIGHTS },
      config: loadConfig({}),
      user: (sc, profile) => new LlmUser(sc, profile, endpoint),
      judge: new LlmConversationJudge(endpoint),
      concurrency: 2,
    });
    expect(results.conversations).toHaveLength(2);
    for (const c of results.conversations) {
      expect(c.errors).toEqual([]);
      expect(c.ended).toBe('resolved');
      expect(c.metrics.agent_consistency).toBe(75);
      expect(c.metrics.needsMet).toBeNull(); // the llm user has no explicit needs
    }
  });
});
