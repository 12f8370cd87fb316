// A whole Slack deployment for end-to-end tests: the fake Slack, a runtime on a temporary SQLite
// file with the shipped packs, and the real SlackPlatform (real Bolt, real receivers) started by
// the same starter `mascot start` uses. The director is made deterministic (round-robin without
// the exploration floor) because these tests are about Slack, not about who speaks.
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import type { Policy } from '../../src/director/policy.ts';
import { builtinPolicies } from '../../src/director/registry.ts';
import { RoundRobinPolicy } from '../../src/director/round-robin.ts';
import { silentLogger } from '../../src/log.ts';
import type { SlackPlatform } from '../../src/platform/slack/platform.ts';
import { slackStarter } from '../../src/platform/slack/starter.ts';
import { createRuntime, type Runtime } from '../../src/runtime.ts';
import type { Generator } from '../../src/speaker/generator.ts';
import { tempDir } from '../support/core.ts';
import { FakeSlack, type FakeApp, type FakeUser } from './server.ts';

export const SIGNING_SECRET = 'fake-signing-secret-not-real';
export const MEETING_PERSONAS = ['facilitator', 'skeptic', 'scribe', 'planner'] as const;

export interface Testbed {
  fake: FakeSlack;
  runtime: Runtime;
  platform: SlackPlatform;
  director: FakeApp;
  /** Persona id -> its own app (apps mode). */
  personaApps: Map<string, FakeApp>;
  admin: FakeUser;
  dana: FakeUser;
  lee: FakeUser;
  /** Everything delivered so far has been handled, rounds included. */
  quiet(): Promise<void>;
  /** Stop the process and start a new one on the same database (the fake Slack stays). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface TestbedOptions {
  identity: 'customize' | 'apps';
  receiver?: 'http' | 'socket';
  /** Extra SLACK_* variables. */
  env?: Record<string, string>;
  /** Extra MASCOT_* variables (e.g. a model endpoint). */
  config?: Record<string, string>;
  /** Writes the turns instead of the built-in offline voice. */
  generator?: Generator;
}

/** Round-robin with no exploration floor: every decision is the next persona in pack order. */
class StrictRoundRobin implements Policy {
  readonly id = 'heuristic';
  readonly version = 'test-round-robin';
  private readonly inner = new RoundRobinPolicy();
  decide(...[state, rng]: Parameters<Policy['decide']>) {
    return this.inner.decide({ ...state, floor: 0 }, rng);
  }
}

export async function startTestbed(options: TestbedOptions): Promise<Testbed> {
  const fake = await FakeSlack.start();
  const director = fake.addApp('Mascot');
  const personaApps = new Map<string, FakeApp>();
  if (options.identity === 'apps') {
    // Persona apps post under their own names: they do not need chat:write.customize.
    for (const id of MEETING_PERSONAS) personaApps.set(id, fake.addApp(id[0]!.toUpperCase() + id.slice(1), ['chat:write']));
  }
  const admin = fake.addUser({ id: 'U0ADMIN01', name: 'alex', realName: 'Alex Admin', displayName: 'Alex', isAdmin: true });
  const dana = fake.addUser({ id: 'U0DANA001', name: 'dana', realName: 'Dana Lopez', displayName: 'Dana' });
  const lee = fake.addUser({ id: 'U0LEE0001', name: 'lee', realName: 'Lee Chen', displayName: 'Lee' });

  const config = loadConfig({ MASCOT_DB: path.join(tempDir('mascot-slack-'), 'mascot.db'), MASCOT_PACK: 'meeting', MASCOT_PACING_MS: '0', ...options.config });
  const receiver = options.receiver ?? 'http';
  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: director.token,
    SLACK_API_URL: fake.apiUrl,
    SLACK_PORT: '0',
    SLACK_HOST: '127.0.0.1',
    SLACK_PACING_MS: '0',
    SLACK_IDENTITY_MODE: options.identity,
    ...(receiver === 'socket' ? { SLACK_APP_TOKEN: fake.appToken(director) } : { SLACK_SIGNING_SECRET: SIGNING_SECRET }),
    ...options.env,
  };
  for (const [id, app] of personaApps) env[`SLACK_BOT_TOKEN_${id.toUpperCase()}`] = app.token;

  /** A process: runtime on the database file, and the platform from the starter `mascot start` uses. */
  const boot = async () => {
    const policies = builtinPolicies();
    policies.set('heuristic', new StrictRoundRobin());
    const runtime = createRuntime(config, silentLogger(), { engine: { policies }, ...(options.generator ? { generator: options.generator } : {}) });
    const platform = (await slackStarter.start(runtime, env)) as SlackPlatform;
    if (receiver === 'http') fake.connectHttp(`http://127.0.0.1:${platform.port}/slack/events`, SIGNING_SECRET);
    return { runtime, platform };
  };

  const bed: Testbed = {
    fake,
    ...(await boot()),
    director,
    personaApps,
    admin,
    dana,
    lee,
    async quiet() {
      // Our posts come back as events while rounds run: settle both until nothing moves.
      do {
        await fake.settled();
        await bed.platform.idle();
      } while (fake.busy);
    },
    async restart() {
      await bed.platform.stop();
      bed.runtime.close();
      Object.assign(bed, await boot());
    },
    async close() {
      await bed.platform.stop();
      bed.runtime.close();
      await fake.close();
    },
  };
  return bed;
}
