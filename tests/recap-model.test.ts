// The model-written recap: the scribe asks the model through the real OpenAI generator (a local
// OpenAI-compatible server stands in for the model); unreadable or failed answers fall back to
// the extractive recap, which says so. Then the same through Slack end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.ts';
import { parseRecapAnswer, RecapFormatError } from '../src/meeting/model-recap.ts';
import { buildRecap, type ThreadMessage } from '../src/meeting/recap.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { OpenAIGenerator } from '../src/speaker/openai.ts';
import { startTestbed, type Testbed } from './fake-slack/testbed.ts';
import { messageText, startOpenAIServer, type ChatRequestBody, type OpenAIServer, type Reply } from './support/openai-server.ts';

const thread: ThreadMessage[] = [
  { authorId: 'U1', authorName: 'Dana', isBot: false, text: 'Should we move the launch to March?', at: 1 },
  { authorId: 'B1', authorName: 'Skeptic', isBot: true, text: 'What does QA need to be confident?', at: 2 },
  { authorId: 'U2', authorName: 'Lee', isBot: false, text: 'We agreed on March 14. Dana will update the roadmap by Friday.', at: 3 },
];

const systemText = (body: ChatRequestBody) => messageText(body.messages.find((m) => m.role === 'system')?.content ?? null);
const isRecapRequest = (body: ChatRequestBody) => systemText(body).includes('write the recap');

const modelAnswer = {
  summary: 'Dana proposed moving the launch to March; Lee confirmed the date.',
  decisions: ['Launch on March 14'],
  action_items: [
    { task: 'Update the roadmap', owner: 'Dana', due: 'Friday' },
    { task: 'Tell support', owner: null, due: null },
  ],
};

describe('reading the model answer', () => {
  it('takes the JSON object out of fenced or chatty answers, with null and "none" as no owner', () => {
    const parsed = parseRecapAnswer(`Here you go:\n\`\`\`json\n${JSON.stringify({ ...modelAnswer, action_items: undefined, actionItems: [{ task: 'Tell support', owner: 'none' }] })}\n\`\`\``);
    expect(parsed.decisions).toEqual([{ text: 'Launch on March 14' }]);
    expect(parsed.actionItems).toEqual([{ task: 'Tell support' }]);
  });

  it('names what is wrong with an answer it cannot use', () => {
    expect(() => parseRecapAnswer('The meeting went well.')).toThrow(RecapFormatError);
    expect(() => parseRecapAnswer('{"decisions": []}')).toThrow(/summary/);
    expect(() => parseRecapAnswer('{"summary": "x", "action_items": [{"owner": "Dana"}]}')).toThrow(/action_items\.0\.task/);
  });
});

describe('recap through the model', () => {
  let server: OpenAIServer;
  let reply: (body: ChatRequestBody) => Reply;
  const scribe = loadPacks().get('meeting')!.personas.find((p) => p.id === 'scribe')!;
  const generator = () => new OpenAIGenerator({ baseURL: server.url, defaultModel: 'mascot-test-model', timeoutMs: 5000, retries: 0, concurrency: 2, log: silentLogger() });

  beforeAll(async () => {
    server = await startOpenAIServer((body) => reply(body));
  });
  afterAll(() => server?.close());

  it('has the scribe ask for summary, decisions and owned action items, and uses the answer', async () => {
    reply = () => ({ json: modelAnswer });
    const recap = await buildRecap(thread, { scribe, generator: generator(), log: silentLogger(), sessionKey: 'test' });
    expect(recap).toMatchObject({ source: 'model', model: 'mascot-test-model', summary: modelAnswer.summary, participants: ['Dana', 'Lee'], messageCount: 3 });
    expect(recap.actionItems).toEqual([{ task: 'Update the roadmap', owner: 'Dana', due: 'Friday' }, { task: 'Tell support' }]);

    const body = server.chatRequests().at(-1)!.body!;
    expect(systemText(body)).toContain('You are Scribe, the meeting scribe.');
    expect(systemText(body)).toContain('owner is null');
    const user = messageText(body.messages.find((m) => m.role === 'user')!.content);
    expect(user).toContain('Lee: We agreed on March 14.');
    expect(user).toContain('Skeptic (companion bot): What does QA need');
    expect(body.temperature).toBe(0.2);
  });

  it('falls back to the extractive recap, saying why, when the answer is not a recap', async () => {
    reply = () => 'It was a productive meeting!';
    const recap = await buildRecap(thread, { scribe, generator: generator(), log: silentLogger(), sessionKey: 'test' });
    expect(recap.source).toBe('extractive');
    expect(recap.fallbackReason).toMatch(/JSON object/);
    expect(recap.decisions.map((d) => d.text)).toEqual(['We agreed on March 14']);
    expect(recap.actionItems).toEqual([{ owner: 'Dana', task: 'update the roadmap', due: 'Friday' }]);
  });

  it('falls back when the model server fails', async () => {
    reply = () => ({ status: 500, message: 'model crashed' });
    const recap = await buildRecap(thread, { scribe, generator: generator(), log: silentLogger(), sessionKey: 'test' });
    expect(recap.source).toBe('extractive');
    expect(recap.fallbackReason).toBeTruthy();
  });
});

describe('Slack recap with a model configured', () => {
  let server: OpenAIServer;
  let bed: Testbed;
  beforeAll(async () => {
    server = await startOpenAIServer((body) => (isRecapRequest(body) ? { json: modelAnswer } : 'Noted, thanks.'));
    bed = await startTestbed({ identity: 'customize', config: { MASCOT_LLM_BASE_URL: server.url, MASCOT_LLM_MODEL: 'mascot-test-model', MASCOT_LLM_RETRIES: '0' } });
  });
  afterAll(async () => {
    await bed?.close();
    await server?.close();
  });

  it('posts the model recap as the scribe, credited to the model and without the offline label', async () => {
    const channel = 'C0MODEL01';
    const root = bed.fake.record({ channel, user: bed.dana.id, text: 'Should we move the launch to March?' });
    bed.fake.record({ channel, user: bed.lee.id, text: 'We agreed on March 14.', thread_ts: root.ts });
    const answer = await (await bed.fake.slash(bed.dana.id, channel, `recap ${root.ts}`)).reply;
    expect(answer.text).toMatch(/1 decision, 2 action items: Dana: Update the roadmap \(due Friday\); Tell support \(no owner named\)/);
    const [recap] = bed.fake.botPosts(channel, root.ts);
    expect(recap!.username).toBe('Scribe');
    const blocks = JSON.stringify(recap!.blocks);
    expect(blocks).toContain('Launch on March 14');
    expect(blocks).toContain('written with mascot-test-model');
    expect(blocks).not.toContain('offline voice');
    expect(recap!.text).not.toContain('(offline voice)');
    const asked = server.chatRequests().filter((r) => isRecapRequest(r.body!));
    expect(asked).toHaveLength(1);
    expect(messageText(asked[0]!.body!.messages.at(-1)!.content)).toContain('Dana: Should we move the launch to March?');
  });
});
