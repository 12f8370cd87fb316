// A running product against the fake Discord: a guild with an enabled and a quiet channel, a
// director bot and one bot per support persona, a runtime on a temporary SQLite file, and the
// real Discord platform started from environment variables as `mascot start` does.
import path from 'node:path';
import type { Client } from 'discord.js';
import { loadConfig } from '../../src/config.ts';
import { actionMask, actionSpace, decideFrom } from '../../src/director/actions.ts';
import type { DirectorState, Policy } from '../../src/director/policy.ts';
import { createLogger, silentLogger } from '../../src/log.ts';
import type { DiscordPlatform, PacingOptions } from '../../src/platform/discord/discord.ts';
import { startDiscord } from '../../src/platform/discord/starter.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';
import { channelKeyOf } from '../../src/session/engine.ts';
import type { Generator } from '../../src/speaker/generator.ts';
import type { Rng } from '../../src/util/rng.ts';
import { ScriptedGenerator, tempDir } from '../support/core.ts';
import { FakeDiscord, type RecordedRequest } from './server.ts';
import type { FakeBot, FakeChannel, FakeGuild, FakeMessage, FakeUser } from './state.ts';

export const SUPPORT_PERSONAS = ['anchor', 'beacon', 'catalyst', 'guide'] as const;

/**
 * A director for adapter tests: in each round the personas in `speakers` speak in that order
 * (a persona the engine does not allow now is replaced by the first one it does allow), then it
 * yields. The director's own choices are tested elsewhere; here they must be predictable.
 */
export class ScriptedPolicy implements Policy {
  readonly id = 'scripted';
  readonly version = 'test';
  speakers: string[] = ['anchor', 'catalyst'];

  decide(state: DirectorState, rng: Rng) {
    const slots = actionSpace(state.pack);
    const mask = actionMask(state, slots);
    const yieldIndex = slots.length - 1;
    let index = yieldIndex;
    const next = this.speakers[state.roundTurns.length];
    if (next !== undefined) {
      const wanted = slots.findIndex((k, i) => mask[i] && k.startsWith(`${next}:`));
      index = wanted >= 0 ? wanted : mask.findIndex((allowed, i) => allowed && i !== yieldIndex);
      if (index < 0) index = yieldIndex;
    }
    const probabilities = slots.map((_, i) => (i === index ? 1 : 0));
    return decideFrom(state, slots, probabilities, rng, { policyId: this.id, policyVersion: this.version, reason: () => 'scripted for a test' });
  }
}

export interface HarnessOptions {
  /** Personas started without a token (webhook mode, or start-up errors). */
  withoutToken?: string[];
  /** Extra or replaced environment variables. */
  env?: Record<string, string>;
  /** Defaults to a ScriptedGenerator; pass `null` for the built-in offline voice. */
  generator?: Generator | null;
  pacing?: PacingOptions;
  /** Do not start the platform (to test start-up failures). */
  noStart?: boolean;
}

export class Harness {
  readonly seen = new Set<string>();
  platform!: DiscordPlatform;

  private constructor(
    readonly fake: FakeDiscord,
    readonly runtime: Runtime,
    readonly env: Record<string, string>,
    readonly gen: ScriptedGenerator,
    readonly policy: ScriptedPolicy,
    readonly bots: { director: FakeBot; personas: Record<string, FakeBot> },
    readonly people: { human: FakeUser; moderator: FakeUser; other: FakeUser },
    readonly guild: FakeGuild,
    readonly channels: { enabled: FakeChannel; quiet: FakeChannel },
  ) {}

  static async start(options: HarnessOptions = {}): Promise<Harness> {
    const fake = await FakeDiscord.start();
    const { state } = fake;
    const human = state.addUser('riley');
    const moderator = state.addUser('morgan');
    const other = state.addUser('sam');
    const director = state.addBot('Mascot');
    const personas: Record<string, FakeBot> = {};
    for (const id of SUPPORT_PERSONAS) personas[id] = state.addBot(id[0]!.toUpperCase() + id.slice(1));
    const guild = state.addGuild('Support circle', moderator.id);
    state.addMember(guild.id, human.id);
    state.addMember(guild.id, other.id);
    const enabled = state.addChannel(guild.id, 'talk');
    const quiet = state.addChannel(guild.id, 'general');

    const env: Record<string, string> = { DISCORD_DIRECTOR_TOKEN: director.token, DISCORD_API_BASE_URL: fake.api };
    for (const id of SUPPORT_PERSONAS) if (!options.withoutToken?.includes(id)) env[`DISCORD_TOKEN_${id.toUpperCase()}`] = personas[id]!.token;
    Object.assign(env, options.env);

    const gen = new ScriptedGenerator();
    const config = loadConfig({ MASCOT_DB: path.join(tempDir('mascot-discord-'), 'mascot.db'), MASCOT_PACING_MS: '0', MASCOT_SEED: '7' });
    const runtime = createRuntime(config, process.env.TEST_LOG ? createLogger("debug") : silentLogger(), options.generator === null ? {} : { generator: options.generator ?? gen });
    const policy = new ScriptedPolicy();
    runtime.engine.policies.set(policy.id, policy);
    const key = channelKeyOf('discord', enabled.id);
    runtime.store.setChannelSetting(key, 'enabled', true, 'test');
    for (const ch of [enabled, quiet]) runtime.store.setChannelSetting(channelKeyOf('discord', ch.id), 'policy', 'scripted', 'test');

    const h = new Harness(fake, runtime, env, gen, policy, { director, personas }, { human, moderator, other }, guild, { enabled, quiet });
    if (!options.noStart) await h.connect(options.pacing);
    return h;
  }

  /** Connect as `mascot start` does; pacing is faster than Discord's by default to keep tests short. */
  async connect(pacing: PacingOptions = { messagesPerWindow: 5, windowMs: 250 }): Promise<void> {
    this.platform = await startDiscord(this.runtime, this.env, { pacing });
    for (const client of [this.platform.director, ...this.platform.personaClients]) this.track(client);
  }

  private track(client: Client): void {
    client.on('messageCreate', (m) => this.seen.add(m.id));
  }

  /** A person posts; resolves when the platform has handled it and every round it started ended. */
  async say(channel: FakeChannel, text: string, author: FakeUser = this.people.human): Promise<FakeMessage> {
    const message = this.fake.say(channel.id, author.id, text);
    await this.settle(message.id);
    return message;
  }

  /** Wait until a message reached our clients, then until the platform is idle. */
  async settle(messageId: string): Promise<void> {
    await until(() => this.seen.has(messageId), `message ${messageId} to reach the bots`);
    await this.platform.idle();
  }

  /** Messages our personas posted in a channel (bots and webhooks, not the director). */
  personaPosts(channel: FakeChannel): FakeMessage[] {
    const ours = new Set(Object.values(this.bots.personas).map((b) => b.user.id));
    return (this.fake.state.messages.get(channel.id) ?? []).filter((m) => ours.has(m.author.id) || m.webhook_id !== undefined);
  }

  /** Recorded REST requests whose path matches. */
  requests(method: string, pathPattern: RegExp): RecordedRequest[] {
    return this.fake.requests.filter((r) => r.method === method && pathPattern.test(r.path));
  }

  personaOfToken(token: string | undefined): string | undefined {
    return Object.entries(this.bots.personas).find(([, b]) => b.token === token)?.[0];
  }

  async close(): Promise<void> {
    await this.platform?.stop();
    this.runtime.close();
    await this.fake.close();
  }
}

/** Poll a condition (client-side events have no hook in the fake). */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
