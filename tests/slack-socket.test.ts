// End to end over Socket Mode: Bolt's SocketModeReceiver opens its connection through the fake's
// apps.connections.open (reached through SLACK_API_URL) and gets events and commands as envelopes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestbed, type Testbed } from './fake-slack/testbed.ts';

const MEET = 'C0SOCK001';

describe('Slack over Socket Mode', () => {
  let bed: Testbed;
  beforeAll(async () => {
    bed = await startTestbed({ identity: 'customize', receiver: 'socket' });
  });
  afterAll(() => bed?.close());

  it('connects with the app-level token through SLACK_API_URL', () => {
    expect(bed.fake.socketCount).toBe(1);
    const open = bed.fake.calls.find((c) => c.method === 'apps.connections.open');
    expect(open?.token).toMatch(/^xapp-/);
  });

  it('acknowledges a slash command envelope and answers through response_url', async () => {
    const on = await bed.fake.slash(bed.admin.id, MEET, 'channel on');
    expect(on.status).toBe(200);
    expect((await on.reply).text).toMatch(/take part/);
    expect(bed.runtime.engine.channelConfig(`slack:${MEET}`).enabled).toBe(true);
  });

  it('acknowledges an event envelope and answers in the thread', async () => {
    const { ts, delivery } = await bed.fake.say(bed.dana.id, MEET, 'Should the demo be live or recorded?');
    expect(delivery?.status).toBe(200);
    await bed.quiet();
    const posts = bed.fake.botPosts(MEET, ts);
    expect(posts).toHaveLength(2);
    expect(new Set(posts.map((p) => p.username)).size).toBe(2);
  });

  it('runs one round for an envelope Slack sends again', async () => {
    const { ts, body } = await bed.fake.say(bed.dana.id, MEET, 'Do we need a dry run on Wednesday?');
    const again = await bed.fake.deliver(body, { retryNum: 1 });
    expect(again?.status).toBe(200);
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, ts)).toHaveLength(2);
  });
});
