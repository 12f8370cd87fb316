// The optional model-backed crisis check through the real `openai` SDK against a local
// OpenAI-compatible server: it adds what the rules miss, never clears a rule hit, is asked only
// when worth it in 'watch' mode, and falls back to the rules when the endpoint misbehaves.
import { afterEach, describe, expect, it } from 'vitest';
import { CrisisDetector } from '../src/safety/detector.ts';
import { MODEL_CHECK_PROMPT, ModelSafetyCheck } from '../src/safety/model-check.ts';
import { lastUserText, startOpenAIServer, type Handler, type OpenAIServer } from './support/openai-server.ts';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function detectorWith(handler: Handler, mode: 'watch' | 'all' = 'watch', timeoutMs = 2000) {
  server = await startOpenAIServer(handler);
  const problems: string[] = [];
  const detector = new CrisisDetector({ model: new ModelSafetyCheck({ baseURL: server.url, model: 'guard-1', timeoutMs }), mode, onModelProblem: (p) => problems.push(p) });
  return { detector, problems, server };
}

// "tonight is the night" is a crisis message the rules miss (datasets/safety/dev.jsonl).
const MISSED = 'tonight is the night. thank you all for everything';

describe('model-backed crisis check', () => {
  it('adds a crisis the rules missed; the model sees the instructions and the message as data', async () => {
    const { detector, server } = await detectorWith((body) => (lastUserText(body).includes('tonight is the night') ? 'crisis' : 'ok'), 'all');
    expect(detector.classifyByRules(MISSED).label).toBe('ok');
    const verdict = await detector.classify(MISSED);
    expect(verdict).toMatchObject({ label: 'crisis', source: 'model', category: 'unspecified', model: { label: 'crisis' } });
    const body = server.requests.at(-1)!.body!;
    expect(body.model).toBe('guard-1');
    expect(body.temperature).toBe(0);
    expect(body.messages[0]).toEqual({ role: 'system', content: MODEL_CHECK_PROMPT });
    expect(lastUserText(body)).toContain(`<message>\n${MISSED}\n</message>`);
  });

  it('never clears what the rules flagged, and is not even asked then', async () => {
    const { detector, server } = await detectorWith(() => 'ok', 'all');
    const verdict = await detector.classify('I want to kill myself');
    expect(verdict).toMatchObject({ label: 'crisis', source: 'rules' });
    expect(server.requests).toHaveLength(0);
  });

  it("in 'watch' mode asks only about messages with risk words or cancelled patterns", async () => {
    const { detector, server } = await detectorWith(() => 'ok');
    await detector.classify('who wants to grab lunch today?');
    expect(server.requests).toHaveLength(0);
    await detector.classify('I feel like everyone would be fine if I was gone');
    await detector.classify("I'm not suicidal");
    expect(server.requests).toHaveLength(2);
  });

  it('reads the answer word leniently and reports anything else as a problem', async () => {
    const answers = ['Crisis.', 'ok', 'I cannot help with that'];
    const { detector, problems } = await detectorWith((_, info) => answers[info.index]!, 'all');
    expect((await detector.classify(MISSED)).label).toBe('crisis');
    expect((await detector.classify(MISSED)).label).toBe('ok');
    const third = await detector.classify(MISSED);
    expect(third).toMatchObject({ label: 'ok', source: 'rules', model: { label: undefined } });
    expect(problems[0]).toMatch(/neither "crisis" nor "ok"/);
  });

  it('falls back to the rules when the endpoint fails or is too slow, naming only its host', async () => {
    const { detector, problems, server } = await detectorWith((_, info) => (info.index === 0 ? { status: 500, message: 'boom' } : { hang: true }), 'all', 300);
    expect((await detector.classify(MISSED)).label).toBe('ok');
    expect((await detector.classify(MISSED)).label).toBe('ok');
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toContain(new URL(server.url).host);
    expect(problems.join('\n')).not.toContain('/v1');
  });
});
