// The `openai` backend with the real SDK against a local OpenAI-compatible server: prompts and
// per-persona models on the wire, candidates, retries, failures, timeouts, barge-in aborts and
// the global concurrency limit.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ChatEvent, Directive, Turn } from '../src/core/types.ts';
import { builtinPolicies } from '../src/director/registry.ts';
import { silentLogger } from '../src/log.ts';
import { loadPacks } from '../src/persona/loader.ts';
import { packSchema, personaSchema, type Pack, type Persona } from '../src/persona/schema.ts';
import type { Outlet } from '../src/platform/platform.ts';
import { Engine } from '../src/session/engine.ts';
import { GenerationError, type GenerationRequest } from '../src/speaker/generator.ts';
import { OpenAIGenerator, type OpenAIGeneratorOptions } from '../src/speaker/openai.ts';
import { Speaker } from '../src/speaker/speaker.ts';
import { openDatabase } from '../src/store/db.ts';
import { Store } from '../src/store/store.ts';
import { sleep } from '../src/util/sleep.ts';
import { lastUserText, startOpenAIServer, type OpenAIServer } from './support/openai-server.ts';

const FAKE_KEY = 'sk-fake-test-key-0000';

let servers: OpenAIServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function serve(...args: Parameters<typeof startOpenAIServer>): Promise<OpenAIServer> {
  const s = await startOpenAIServer(...args);
  servers.push(s);
  return s;
}

function generator(baseURL: string, over: Partial<OpenAIGeneratorOptions> = {}): OpenAIGenerator {
  return new OpenAIGenerator({ baseURL, apiKey: FAKE_KEY, timeoutMs: 10_000, retries: 0, concurrency: 4, log: silentLogger(), ...over });
}

function request(over: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    personaId: 'anchor',
    strategy: 'reflection',
    messages: [
      { role: 'system', content: 'You are Anchor.' },
      { role: 'user', content: 'I feel alone.' },
    ],
    model: 'base-model',
    temperature: 0.7,
    maxTokens: 120,
    context: { sessionKey: 'test:1', humanName: 'Sam', lastHumanText: 'I feel alone.', recentBotTexts: [] },
    ...over,
  };
}

/** A port nothing listens on: bind one, note it, close it. */
async function refusedPort(): Promise<string> {
  const s = await startOpenAIServer();
  await s.close();
  return s.url;
}

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await sleep(5);
}

function persona(id: string, displayName: string, model: string | undefined, temperature: number, maxTokens: number): Persona {
  return personaSchema.parse({
    id,
    displayName,
    role: `${id} role`,
    description: `${displayName} is a test companion.`,
    voice: [`${displayName} speaks briefly.`],
    strategies: ['reflection', 'question'],
    generation: { ...(model ? { model } : {}), temperature, maxTokens },
  });
}

describe('OpenAIGenerator against an OpenAI-compatible server', () => {
  it('sends the persona prompt and transcript with each persona model (LoRA adapter), temperature and max_tokens', async () => {
    const server = await serve((body) => `${body.model === 'anchor' ? 'Anchor' : 'Catalyst'}: reply from ${body.model}`);
    const anchor = persona('anchor', 'Anchor', 'anchor', 0.6, 150);
    const catalyst = persona('catalyst', 'Catalyst', 'catalyst', 0.9, 90);
    const pack: Pack = {
      ...packSchema.parse({
        id: 'support',
        name: 'Support circle',
        description: 'Test pack.',
        strategies: {
          reflection: { label: 'Reflection of feelings', phase: 'explore', instruction: 'Name the feeling.' },
          question: { label: 'Socratic question', phase: 'insight', instruction: 'Ask one question.' },
        },
        safety: { resources: 'Call someone.' },
      }),
      personas: [anchor, catalyst],
      dir: 'test',
    };
    const transcript: Turn[] = [
      { messageId: 'm1', author: { id: 'u1', name: 'Sam', isBot: false }, text: 'I moved abroad and feel so alone.', at: 1 },
      { messageId: 'm2', author: { id: 'anchor', name: 'Anchor', isBot: true, personaId: 'anchor' }, text: 'That sounds lonely.', at: 2 },
    ];
    const speaker = new Speaker(generator(server.url));
    const speak = (p: Persona, directive: Directive) => speaker.speak({ pack, persona: p, personas: pack.personas, directive, transcript, sessionKey: 'console:1' });

    const a = await speak(anchor, { personaId: 'anchor', strategy: 'reflection', instruction: 'Name the feeling.' });
    const c = await speak(catalyst, { personaId: 'catalyst', strategy: 'question', instruction: 'Ask one question.' });

    expect(a).toEqual({ text: 'reply from anchor', offline: false }); // the "Anchor:" label was cleaned off
    expect(c).toEqual({ text: 'reply from catalyst', offline: false });
    const [ra, rc] = server.chatRequests().map((r) => r.body!);
    expect(ra).toMatchObject({ model: 'anchor', temperature: 0.6, max_tokens: 150 });
    expect(rc).toMatchObject({ model: 'catalyst', temperature: 0.9, max_tokens: 90 });
    expect(ra!.n).toBeUndefined();
    expect(ra!.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(ra!.messages[0]!.content).toContain('You are Anchor, the anchor role');
    expect(ra!.messages[0]!.content).toContain('Catalyst: catalyst role');
    expect(rc!.messages[0]!.content).toContain('You are Catalyst');
    expect(ra!.messages[1]!.content).toContain('Sam: I moved abroad and feel so alone.\nAnchor: That sounds lonely.');
    expect(server.chatRequests()[0]!.headers.authorization).toBe(`Bearer ${FAKE_KEY}`);
  });

  it('reports the model the server answered with and marks the text as not offline', async () => {
    const server = await serve(() => ({ texts: ['hello'], model: 'Qwen/Qwen2.5-7B-Instruct' }));
    const result = await generator(server.url).generate(request({ model: 'anchor' }));
    expect(result).toEqual({ texts: ['hello'], offline: false, model: 'Qwen/Qwen2.5-7B-Instruct' });
  });

  it('uses the default model when a persona names none, and sends no Authorization header without a key', async () => {
    const server = await serve();
    const result = await generator(server.url, { defaultModel: 'llama3.1:8b', apiKey: undefined }).generate(request({ model: undefined }));
    expect(result.texts).toEqual(['[llama3.1:8b] re: I feel alone.']);
    expect(server.chatRequests()[0]!.headers.authorization).toBeUndefined();
    expect(server.requests.some((r) => r.path === '/v1/models')).toBe(false);
  });

  it('without any model name asks /models once and uses the first listed', async () => {
    const server = await serve(undefined, { models: ['served-base', 'anchor'] });
    const gen = generator(server.url);
    const first = await gen.generate(request({ model: undefined }));
    const second = await gen.generate(request({ model: undefined }));
    expect(first.model).toBe('served-base');
    expect(second.texts).toEqual(['[served-base] re: I feel alone.']);
    expect(server.requests.filter((r) => r.path === '/v1/models')).toHaveLength(1);
  });

  it('fails clearly when the server lists no models and none is configured', async () => {
    const server = await serve(undefined, { models: [] });
    const err = await generator(server.url).generate(request({ model: undefined })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GenerationError);
    expect((err as Error).message).toMatch(/lists no models.*MASCOT_LLM_MODEL/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('asks for n candidates in one request when the server honours n (vLLM, SGLang)', async () => {
    const server = await serve();
    const gen = generator(server.url);
    const result = await gen.generate(request({ n: 3 }));
    expect(result.texts).toEqual(['#1', '#2', '#3'].map((k) => `[base-model] re: I feel alone. ${k}`));
    await gen.generate(request({ n: 2 }));
    expect(server.chatRequests().map((r) => r.body!.n)).toEqual([3, 2]);
  });

  it('makes further calls up to n when the server ignores n (Ollama), and stops sending n', async () => {
    const server = await serve((_body, info) => ({ texts: [`candidate ${info.index}`] }));
    const gen = generator(server.url);
    const result = await gen.generate(request({ n: 3 }));
    expect(result.texts.sort()).toEqual(['candidate 0', 'candidate 1', 'candidate 2']);
    expect(server.chatRequests().map((r) => r.body!.n)).toEqual([3, undefined, undefined]);
    const again = await gen.generate(request({ n: 2 }));
    expect(again.texts.sort()).toEqual(['candidate 3', 'candidate 4']);
    expect(server.chatRequests().slice(3).map((r) => r.body!.n)).toEqual([undefined, undefined]);
  });

  it('falls back to one candidate per request when the server rejects n > 1 (llama.cpp server), without retrying the probe', async () => {
    const server = await serve((body, info) =>
      (body.n ?? 1) > 1 ? { status: 500, message: 'Only one completion choice is allowed' } : { texts: [`candidate ${info.index}`] },
    );
    const gen = generator(server.url, { retries: 2 });
    const result = await gen.generate(request({ n: 3 }));
    expect(result.texts.sort()).toEqual(['candidate 1', 'candidate 2', 'candidate 3']);
    await gen.generate(request({ n: 2 }));
    expect(server.chatRequests().map((r) => r.body!.n)).toEqual([3, undefined, undefined, undefined, undefined, undefined]);
  });

  it('retries a 500 and then succeeds', async () => {
    const server = await serve((body, info) => (info.index === 0 ? { status: 500, message: 'CUDA out of memory' } : `ok: ${lastUserText(body)}`));
    const result = await generator(server.url, { retries: 2 }).generate(request());
    expect(result.texts).toEqual(['ok: I feel alone.']);
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('gives up after the retries with one GenerationError naming the host and the server error', async () => {
    const server = await serve(() => ({ status: 503, message: 'engine overloaded', headers: { 'retry-after-ms': '1' } }));
    const err = await generator(server.url, { retries: 2 }).generate(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GenerationError);
    const host = new URL(server.url).host;
    expect((err as Error).message).toBe(`model server ${host} (model "base-model"): HTTP 503: engine overloaded after 3 attempts`);
    expect(server.chatRequests()).toHaveLength(3);
  });

  it('gives up with a GenerationError on a refused port, naming the host and the cause', async () => {
    const url = await refusedPort();
    const err = await generator(url, { retries: 1 }).generate(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GenerationError);
    expect((err as Error).message).toContain(`model server ${new URL(url).host}`);
    expect((err as Error).message).toContain('ECONNREFUSED');
    expect((err as Error).message).not.toContain(FAKE_KEY);
  });

  it('does not retry a 4xx such as an unknown model and says what the server said', async () => {
    const server = await serve((body) => ({ status: 404, message: `The model \`${body.model}\` does not exist.` }));
    const err = await generator(server.url, { retries: 3 }).generate(request({ model: 'anchorr' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GenerationError);
    expect((err as Error).message).toMatch(/HTTP 404 .*: The model `anchorr` does not exist\./);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('keeps the server message of error bodies that are not OpenAI-shaped (older vLLM and SGLang, FastAPI)', async () => {
    const server = await serve((body, info) =>
      info.index === 0
        ? { status: 404, body: { object: 'error', message: `The model \`${body.model}\` does not exist.`, type: 'NotFoundError', param: null, code: 404 } }
        : info.index === 1
          ? { status: 422, body: { detail: 'messages: field required' } }
          : { status: 400, body: 'plain words' },
    );
    const gen = generator(server.url);
    const messages = [];
    for (let i = 0; i < 3; i++) messages.push(((await gen.generate(request({ model: 'anchorr' })).catch((e: unknown) => e)) as Error).message);
    expect(messages[0]).toMatch(/HTTP 404 .*: The model `anchorr` does not exist\.$/);
    expect(messages[1]).toMatch(/HTTP 422: messages: field required$/);
    expect(messages[2]).toMatch(/HTTP 400: plain words$/);
  });

  it('sends the API key as a bearer token but never puts it in an error message, even when the server echoes it', async () => {
    const server = await serve((_body, info) => ({ status: 401, message: `invalid credentials: ${info.headers.authorization}` }));
    const err = await generator(server.url).generate(request()).catch((e: unknown) => e);
    expect(server.chatRequests()[0]!.headers.authorization).toBe(`Bearer ${FAKE_KEY}`);
    expect(err).toBeInstanceOf(GenerationError);
    const message = (err as Error).message;
    expect(message).toContain('HTTP 401 (check MASCOT_LLM_API_KEY)');
    expect(message).toContain('Bearer [secret]');
    expect(message).not.toContain(FAKE_KEY);
  });

  it('times out a server that never answers and closes the connection', async () => {
    const server = await serve(() => ({ hang: true }));
    const err = await generator(server.url, { timeoutMs: 200 }).generate(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GenerationError);
    expect((err as Error).message).toContain('no answer within 200 ms');
    await expect(server.chatRequests()[0]!.outcome).resolves.toBe('closed');
  });

  it('rejects a malformed body and a body that is not a chat completion with a GenerationError', async () => {
    const server = await serve((_b, info) => (info.index === 0 ? { malformed: '{"choices": [' } : { malformed: '<html>proxy error</html>', headers: { 'content-type': 'text/html' } }));
    const gen = generator(server.url);
    const broken = await gen.generate(request()).catch((e: unknown) => e);
    expect(broken).toBeInstanceOf(GenerationError);
    expect((broken as Error).message).toContain('malformed response');
    const html = await gen.generate(request()).catch((e: unknown) => e);
    expect(html).toBeInstanceOf(GenerationError);
    expect((html as Error).message).toContain('has no choices');
  });

  it('an abort mid-request rejects at once with the abort reason and the server sees the connection closed', async () => {
    const server = await serve(() => ({ hang: true }));
    const controller = new AbortController();
    const pending = generator(server.url, { timeoutMs: 60_000, retries: 2 })
      .generate(request({ signal: controller.signal }))
      .catch((e: unknown) => e);
    await until(() => server.inFlight === 1);
    const reason = new Error('barge-in: a new human message arrived');
    const abortedAt = Date.now();
    controller.abort(reason);
    const err = await pending;
    expect(err).toBe(reason);
    expect(err).not.toBeInstanceOf(GenerationError);
    expect(Date.now() - abortedAt).toBeLessThan(5_000); // far below the 60 s timeout and the retries
    await expect(server.chatRequests()[0]!.outcome).resolves.toBe('closed');
    expect(server.chatRequests()).toHaveLength(1); // an abort is not retried
  });

  it('an abort while queued behind the concurrency limit rejects and never reaches the server', async () => {
    const server = await serve(() => ({ hang: true }));
    const gen = generator(server.url, { concurrency: 1 });
    const first = new AbortController();
    const second = new AbortController();
    const running = gen.generate(request({ signal: first.signal })).catch((e: unknown) => e);
    await until(() => server.inFlight === 1);
    const queued = gen.generate(request({ signal: second.signal })).catch((e: unknown) => e);
    second.abort(new Error('second cancelled'));
    expect(await queued).toMatchObject({ message: 'second cancelled' });
    first.abort(new Error('first cancelled'));
    expect(await running).toMatchObject({ message: 'first cancelled' });
    await sleep(50);
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('an already aborted request sends nothing', async () => {
    const server = await serve();
    const reason = new Error('cancelled before start');
    const err = await generator(server.url).generate(request({ signal: AbortSignal.abort(reason) })).catch((e: unknown) => e);
    expect(err).toBe(reason);
    expect(server.requests).toHaveLength(0);
  });

  it('keeps at most `concurrency` requests in flight across callers', async () => {
    const server = await serve(async (body) => {
      await sleep(40);
      return `done: ${lastUserText(body)}`;
    });
    const gen = generator(server.url, { concurrency: 2 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => gen.generate(request({ messages: [{ role: 'user', content: `message ${i}` }] }))),
    );
    expect(results.map((r) => r.texts[0])).toEqual(Array.from({ length: 8 }, (_, i) => `done: message ${i}`));
    expect(server.chatRequests()).toHaveLength(8);
    expect(server.maxInFlight).toBe(2);
  });

  it('counts the extra calls for servers that ignore n against the same limit', async () => {
    const server = await serve(async (_b, info) => {
      await sleep(30);
      return { texts: [`c${info.index}`] };
    });
    const result = await generator(server.url, { concurrency: 2 }).generate(request({ n: 5 }));
    expect(result.texts).toHaveLength(5);
    expect(server.maxInFlight).toBe(2);
  });

  it('refuses a base URL that is not a URL, naming the variable', () => {
    expect(() => generator('localhost:8000')).toThrow(/MASCOT_LLM_BASE_URL: "localhost:8000" is not an http\(s\) URL/);
  });
});

describe('OpenAIGenerator in the engine', () => {
  it('a new human message aborts the in-flight model request and the next round is answered', async () => {
    let hang = false;
    const server = await serve((body) => (hang ? { hang: true } : `heard ${lastUserText(body).length} characters`));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mascot-openai-'));
    const db = openDatabase(path.join(dir, 'mascot.db'));
    const engine = new Engine({
      packs: loadPacks(),
      defaultPack: 'support',
      store: new Store(db, () => {}),
      speaker: new Speaker(generator(server.url, { defaultModel: 'base', timeoutMs: 60_000 })),
      policies: builtinPolicies(),
      log: silentLogger(),
      pacingMs: 0,
    });
    const posted: string[] = [];
    const outlet: Outlet = {
      post: async (p, text) => {
        posted.push(`${p.displayName}: ${text}`);
        return { messageId: `bot-${posted.length}` };
      },
    };
    const human = (messageId: string, text: string): ChatEvent => ({ platform: 'console', channelId: 'c1', messageId, author: { id: 'u1', name: 'Sam', isBot: false }, text, mentions: [], at: Date.now() });
    try {
      hang = true;
      const first = engine.receive(human('h1', 'I moved abroad and feel so alone since my husband travels for work'), outlet);
      await until(() => server.inFlight === 1);
      hang = false;
      await engine.receive(human('h2', 'Sorry, one more thing: I also started a new job.'), outlet);
      await first;
      expect(await server.chatRequests()[0]!.outcome).toBe('closed');
      expect(posted.length).toBeGreaterThan(0);
      expect(posted.every((line) => /: heard \d+ characters$/.test(line))).toBe(true);
    } finally {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the local OpenAI-compatible test server', () => {
  it('serves /v1/models, JSON-mode answers and HTTP errors to the plain SDK', async () => {
    const server = await serve((body) => (body.response_format?.type === 'json_object' ? { json: { score: 4, reason: lastUserText(body) } } : { status: 400, message: 'json only' }), {
      models: ['judge'],
    });
    const client = new OpenAI({ baseURL: server.url, apiKey: FAKE_KEY, maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['judge']);
    const completion = await client.chat.completions.create({ model: 'judge', messages: [{ role: 'user', content: 'rate this' }], response_format: { type: 'json_object' } });
    expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ score: 4, reason: 'rate this' });
    await expect(client.chat.completions.create({ model: 'judge', messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('json only') });
  });
});
