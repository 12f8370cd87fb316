// Reactions as feedback over Slack, end to end: reaction_added / reaction_removed events signed and
// delivered by the local fake Slack to the real Bolt app, feedback rows in the real SQLite file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMessage } from './fake-slack/server.ts';
import { startTestbed, type Testbed } from './fake-slack/testbed.ts';
import { ScriptedGenerator } from './support/core.ts';

const MEET = 'C0MEET001';
const DM = 'D0DANA001';

describe('Slack reactions on persona turns', () => {
  let bed: Testbed;
  const gen = new ScriptedGenerator();
  beforeAll(async () => {
    bed = await startTestbed({ identity: 'customize', generator: gen });
    await (await bed.fake.slash(bed.admin.id, MEET, 'channel on')).reply;
  });
  afterAll(() => bed?.close());

  const rows = () =>
    bed.runtime.db
      .prepare("SELECT channel_key AS channelKey, message_id AS messageId, round_id AS roundId, user_id AS userId, value FROM feedback WHERE kind = 'reaction' ORDER BY id")
      .all();
  const clear = () => bed.runtime.db.prepare('DELETE FROM feedback').run();
  const roundOf = (channelKey: string, m: FakeMessage) =>
    bed.runtime.db.prepare('SELECT round_id FROM messages WHERE channel_key = ? AND platform_id = ?').pluck().get(channelKey, m.ts) as string;
  const react = async (user: string, m: FakeMessage, name: string) => {
    await bed.fake.react(user, m, name);
    await bed.quiet();
  };
  const unreact = async (user: string, m: FakeMessage, name: string) => {
    await bed.fake.unreact(user, m, name);
    await bed.quiet();
  };
  /** A person starts a meeting thread; resolves to its root and the two persona turns in it. */
  const meeting = async (text: string) => {
    const { ts } = await bed.fake.say(bed.dana.id, MEET, text);
    await bed.quiet();
    const root = bed.fake.messages.find((m) => m.channel === MEET && m.ts === ts)!;
    const posts = bed.fake.botPosts(MEET, ts);
    expect(posts).toHaveLength(2);
    return { key: `slack:${MEET}:${ts}`, root, posts: posts as [FakeMessage, FakeMessage] };
  };

  it('stores 👍/👎 on a turn in a thread against its round, and deletes the row when the reaction is taken back', async () => {
    clear();
    const { key, root, posts } = await meeting('Should we move the launch to March?');
    const [a, b] = posts;
    const { dana, lee } = bed;

    await react(lee.id, b, '+1');
    expect(rows()).toEqual([{ channelKey: key, messageId: b.ts, roundId: roundOf(key, b), userId: lee.id, value: 1 }]);
    await react(dana.id, a, '-1::skin-tone-3');
    await react(lee.id, b, '-1');
    expect(rows()).toHaveLength(3);

    // Reactions that were never stored change nothing, added or taken back: not 👍/👎, on a
    // person's message, from another app's bot user, from the app itself.
    const otherBot = bed.fake.addApp('Polly');
    for (const [user, message, name] of [
      [lee.id, b, 'tada'],
      [lee.id, root, '+1'],
      [otherBot.userId, a, '-1'],
      [bed.director.userId, b, '+1'],
    ] as const) {
      await react(user, message, name);
      expect(rows()).toHaveLength(3);
      await unreact(user, message, name);
      expect(rows()).toHaveLength(3);
    }

    // Lee takes back the 👎, then the 👍: each removal deletes that reaction's row and only it.
    await unreact(lee.id, b, '-1');
    expect(rows()).toEqual([
      { channelKey: key, messageId: b.ts, roundId: roundOf(key, b), userId: lee.id, value: 1 },
      { channelKey: key, messageId: a.ts, roundId: roundOf(key, a), userId: dana.id, value: -1 },
    ]);
    await unreact(lee.id, b, '+1');
    expect(rows()).toEqual([{ channelKey: key, messageId: a.ts, roundId: roundOf(key, a), userId: dana.id, value: -1 }]);
  });

  it("never stores an opted-out person's reaction, and their removal deletes nobody else's", async () => {
    clear();
    const { key, posts } = await meeting('Who owns the release notes?');
    const [a] = posts;
    await (await bed.fake.slash(bed.lee.id, MEET, 'optout')).reply;
    try {
      await react(bed.lee.id, a, '+1');
      expect(rows()).toEqual([]);
      await react(bed.dana.id, a, '+1');
      await unreact(bed.lee.id, a, '+1');
      expect(rows()).toEqual([{ channelKey: key, messageId: a.ts, roundId: roundOf(key, a), userId: bed.dana.id, value: 1 }]);
    } finally {
      await (await bed.fake.slash(bed.lee.id, MEET, 'optin')).reply;
    }
  });

  it('keeps a long turn in one message (sections), so a reaction on it is on the whole turn', async () => {
    clear();
    const sentence = 'Here is one more careful thought about the plan and what it needs from each of us. ';
    gen.reply = () => sentence.repeat(45).trim();
    try {
      const { key, posts } = await meeting('Walk me through every risk, in detail.');
      const [a] = posts;
      expect(a.text.length).toBeGreaterThan(3000);
      expect((a.blocks ?? []).filter((block) => block.type === 'section').length).toBeGreaterThan(1);
      await react(bed.lee.id, a, 'thumbsup');
      expect(rows()).toEqual([{ channelKey: key, messageId: a.ts, roundId: roundOf(key, a), userId: bed.lee.id, value: 1 }]);
    } finally {
      gen.reply = (req, n) => `${req.personaId} uses ${req.strategy} (#${n}).`;
    }
  });

  it('works in a DM with the app, where the conversation is the DM itself', async () => {
    clear();
    await bed.fake.say(bed.dana.id, DM, 'Can you help me prepare for my review?');
    await bed.quiet();
    const [turn] = bed.fake.botPosts(DM);
    expect(turn).toBeDefined();
    await react(bed.dana.id, turn!, '+1');
    expect(rows()).toEqual([{ channelKey: `slack:${DM}`, messageId: turn!.ts, roundId: roundOf(`slack:${DM}`, turn!), userId: bed.dana.id, value: 1 }]);
    await unreact(bed.dana.id, turn!, '+1');
    expect(rows()).toEqual([]);
  });
});
