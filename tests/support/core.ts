// Test fixtures for the core: a temporary database, the shipped packs, an engine wired with a
// controllable generator, and an outlet that records what was posted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinPolicies } from '../../src/director/registry.ts';
import { silentLogger } from '../../src/log.ts';
import { loadPacks } from '../../src/persona/loader.ts';
import type { Persona } from '../../src/persona/schema.ts';
import type { Outlet, PostOptions } from '../../src/platform/platform.ts';
import { Engine, type EngineOptions } from '../../src/session/engine.ts';
import type { GenerationRequest, GenerationResult, Generator } from '../../src/speaker/generator.ts';
import { Speaker } from '../../src/speaker/speaker.ts';
import { openDatabase } from '../../src/store/db.ts';
import { Store } from '../../src/store/store.ts';
import type { ChatEvent } from '../../src/core/types.ts';

export function tempDir(prefix = 'mascot-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A generator for scheduler tests: answers "<persona>/<strategy> #n" at once, or, for requests
 * `hold` selects, waits until the request is aborted (an in-flight generation to barge in on).
 */
export class ScriptedGenerator implements Generator {
  readonly name = 'scripted';
  readonly requests: GenerationRequest[] = [];
  readonly aborted: GenerationRequest[] = [];
  hold: (req: GenerationRequest) => boolean = () => false;
  fail: (req: GenerationRequest) => Error | undefined = () => undefined;
  reply: (req: GenerationRequest, n: number) => string = (req, n) => `${req.personaId} uses ${req.strategy} (#${n}).`;

  async generate(req: GenerationRequest): Promise<GenerationResult> {
    this.requests.push(req);
    const n = this.requests.length;
    const failure = this.fail(req);
    if (failure) throw failure;
    if (this.hold(req)) {
      await new Promise<void>((_, reject) => {
        const abort = () => {
          this.aborted.push(req);
          reject(req.signal?.reason ?? new Error('aborted'));
        };
        if (req.signal?.aborted) abort();
        else req.signal?.addEventListener('abort', abort, { once: true });
      });
    }
    return { texts: [this.reply(req, n)], offline: false, model: 'scripted' };
  }
}

export interface Posted {
  persona: Persona;
  text: string;
  options: PostOptions;
}

export class RecordingOutlet implements Outlet {
  readonly posts: Posted[] = [];
  readonly notices: string[] = [];
  readonly typing_: string[] = [];
  async post(persona: Persona, text: string, options: PostOptions) {
    this.posts.push({ persona, text, options });
    return { messageId: `bot-${this.posts.length}` };
  }
  async typing(persona: Persona) {
    this.typing_.push(persona.id);
  }
  async notice(text: string) {
    this.notices.push(text);
  }
}

export function makeEngine(generator: Generator, options: Partial<EngineOptions> = {}, dbFile = path.join(tempDir(), 'mascot.db')) {
  const db = openDatabase(dbFile);
  const store = new Store(db);
  const engine = new Engine({
    packs: loadPacks(),
    defaultPack: 'support',
    store,
    speaker: new Speaker(generator),
    policies: builtinPolicies(),
    log: silentLogger(),
    pacingMs: 0,
    ...options,
  });
  return { engine, store, db };
}

let counter = 0;
export function humanEvent(text: string, overrides: Partial<ChatEvent> = {}): ChatEvent {
  counter++;
  return {
    platform: 'console',
    channelId: 'test',
    messageId: `m${counter}`,
    author: { id: 'u1', name: 'Sam', isBot: false },
    text,
    mentions: [],
    at: Date.now(),
    ...overrides,
  };
}
