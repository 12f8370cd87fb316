// `mascot start` (what `npm start` runs) brings Slack up when its tokens are set: the real entry
// point in a child process, against the local fake Slack, on a temporary database.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack, waitFor, type FakeApp } from './fake-slack/server.ts';
import { SIGNING_SECRET } from './fake-slack/testbed.ts';
import { loadConfig } from '../src/config.ts';
import { silentLogger } from '../src/log.ts';
import { slackStarter } from '../src/platform/slack/starter.ts';
import { createRuntime } from '../src/runtime.ts';
import { offlineEnv, ROOT } from './support/cli.ts';
import { tempDir } from './support/core.ts';

describe('mascot start with Slack configured', () => {
  let fake: FakeSlack;
  let director: FakeApp;
  beforeAll(async () => {
    fake = await FakeSlack.start();
    director = fake.addApp('Mascot');
    fake.addUser({ id: 'U0ADMIN01', name: 'alex', isAdmin: true });
    fake.addUser({ id: 'U0DANA001', name: 'dana', displayName: 'Dana' });
  });
  afterAll(() => fake?.close());

  const env = (extra: Record<string, string> = {}) =>
    offlineEnv({
      MASCOT_DB: path.join(tempDir('mascot-slack-start-'), 'mascot.db'),
      MASCOT_PACK: 'meeting',
      MASCOT_LOG_LEVEL: 'info',
      SLACK_BOT_TOKEN: director.token,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_API_URL: fake.apiUrl,
      SLACK_HOST: '127.0.0.1',
      SLACK_PORT: '0',
      SLACK_PACING_MS: '0',
      ...extra,
    });

  it('connects, answers in a thread, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/mascot.js'), 'start'], { cwd: ROOT, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const port = await waitFor('the events endpoint', () => /"port":(\d+)[^\n]*slack events endpoint listening/.exec(stderr)?.[1], 25_000);
      fake.connectHttp(`http://127.0.0.1:${port}/slack/events`, SIGNING_SECRET);
      await (await fake.slash('U0ADMIN01', 'C0START01', 'channel on')).reply;
      const { ts } = await fake.say('U0DANA001', 'C0START01', 'Should we split the release in two?');
      const posts = await waitFor('two persona turns', () => (fake.botPosts('C0START01', ts).length >= 2 ? fake.botPosts('C0START01', ts) : undefined));
      expect(new Set(posts.map((p) => p.username)).size).toBe(2);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stderr).not.toContain(director.token);
  });

  it('refuses to start with a token Slack rejects, naming the variable and not the token', async () => {
    const runtime = createRuntime(loadConfig({ MASCOT_DB: path.join(tempDir('mascot-slack-start-'), 'mascot.db'), MASCOT_PACK: 'meeting' }), silentLogger());
    try {
      const started = slackStarter.start(runtime, { SLACK_BOT_TOKEN: 'xoxb-fake-revoked-token', SLACK_SIGNING_SECRET: SIGNING_SECRET, SLACK_API_URL: fake.apiUrl, SLACK_PORT: '0' });
      await expect(started).rejects.toThrow('SLACK_BOT_TOKEN: Slack rejected the token (invalid_auth)');
      await expect(started).rejects.not.toThrow('xoxb-fake-revoked-token');
    } finally {
      runtime.close();
    }
  });
});
