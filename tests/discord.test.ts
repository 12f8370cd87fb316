// End to end: the real discord.js clients of the product against the local fake Discord.
import { afterEach, describe, expect, it } from 'vitest';
import { OFFLINE_LABEL } from '../src/platform/discord/outlet.ts';
import { channelKeyOf } from '../src/session/engine.ts';
import { Harness, until } from './fake-discord/harness.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const MESSAGES = /^\/channels\/\d+\/messages$/;

describe('Discord conversation', () => {
  it('a human message in an enabled channel makes two persona bots post with their own tokens, typing, no pings', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    const human = await h.say(enabled, 'I moved abroad and I feel so alone since my partner travels for work.');

    const posts = h.personaPosts(enabled);
    expect(posts.map((m) => m.author.username)).toEqual(['Anchor', 'Catalyst']);
    const sends = h.requests('POST', new RegExp(`^/channels/${enabled.id}/messages$`));
    expect(sends.map((r) => h!.personaOfToken(r.token))).toEqual(['anchor', 'catalyst']);
    for (const r of sends) {
      const body = r.body as { allowed_mentions: unknown; nonce: string; enforce_nonce: boolean };
      expect(body.allowed_mentions).toEqual({ parse: [], replied_user: false });
      expect(body.enforce_nonce).toBe(true);
      expect(body.nonce.length).toBeLessThanOrEqual(25);
    }
    // The first turn replies to the person (without a ping); the second is a plain message.
    expect((sends[0]!.body as { message_reference?: { message_id: string } }).message_reference?.message_id).toBe(human.id);
    expect((sends[1]!.body as { message_reference?: unknown }).message_reference).toBeUndefined();
    // Each persona showed its own typing indicator before posting.
    const typing = h.requests('POST', new RegExp(`^/channels/${enabled.id}/typing$`)).map((r) => h!.personaOfToken(r.token));
    expect(typing).toEqual(expect.arrayContaining(['anchor', 'catalyst']));
    expect(h.fake.requests.every((r) => r.token !== h!.bots.personas.beacon!.token || r.path === '/gateway/bot')).toBe(true);
    // Persona clients log in with minimal intents; only the director reads message content.
    const identify = (token: string) => h!.fake.gatewayLog.find((g) => g.op === 2 && (g.d as { token: string }).token === token)!.d as { intents: number };
    expect(identify(h.bots.personas.anchor!.token).intents).toBe(1 | (1 << 12));
    expect(identify(h.bots.director.token).intents & (1 << 15)).toBeTruthy();

    // Logged: the human turn, both bot turns (with their Discord ids), and the decisions.
    const rows = h.runtime.db.prepare('SELECT platform_id, is_bot, persona_id FROM messages ORDER BY id').all();
    expect(rows).toEqual([
      { platform_id: human.id, is_bot: 0, persona_id: null },
      { platform_id: posts[0]!.id, is_bot: 1, persona_id: 'anchor' },
      { platform_id: posts[1]!.id, is_bot: 1, persona_id: 'catalyst' },
    ]);
  });

  it('outside enabled channels only a mentioned persona answers; a bot message never starts a round', async () => {
    h = await Harness.start();
    const { quiet, enabled } = h.channels;
    await h.say(quiet, 'Nobody is asked here.');
    expect(h.personaPosts(quiet)).toHaveLength(0);

    h.policy.speakers = ['anchor', 'catalyst'];
    await h.say(quiet, `<@${h.bots.personas.guide!.user.id}> what could I do about my landlord?`);
    expect(h.personaPosts(quiet).map((m) => m.author.username)).toEqual(['Guide']);
    // Said by name at the start of the message works too.
    await h.say(quiet, 'Beacon, do you think I can do it?');
    expect(h.personaPosts(quiet).map((m) => m.author.username)).toEqual(['Guide', 'Beacon']);
    // Mentioning the director addresses the whole circle.
    await h.say(quiet, `<@${h.bots.director.user.id}> can you all help me think?`);
    expect(h.personaPosts(quiet).map((m) => m.author.username)).toEqual(['Guide', 'Beacon', 'Anchor', 'Catalyst']);

    // Another bot (not ours) talks in the enabled channel: it joins the transcript, no round runs.
    const otherBot = h.fake.state.addBot('Weatherbot');
    h.fake.state.guilds.get(h.guild.id)!.botIds.add(otherBot.user.id);
    const botMessage = h.fake.say(enabled.id, otherBot.user.id, 'Sunny tomorrow, 24 degrees.');
    await h.settle(botMessage.id);
    const human = await h.say(enabled, 'Thanks. I am still nervous about the exam.');
    const triggers = h.runtime.db.prepare('SELECT DISTINCT trigger_id FROM decisions WHERE channel_key = ?').pluck().all(channelKeyOf('discord', enabled.id));
    expect(triggers).toEqual([human.id]);
    const transcript = h.runtime.engine.session(channelKeyOf('discord', enabled.id)).transcript.map((t) => t.text);
    expect(transcript[0]).toBe('Sunny tomorrow, 24 degrees.');
    // Our personas' own posts came back through the gateway and started nothing either.
    expect(h.personaPosts(enabled)).toHaveLength(2);
  });

  it('a human message during a round cancels the rest of it', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    const gen = h.gen;
    gen.hold = (req) => req.personaId === 'catalyst' && req.context.lastHumanText.startsWith('first');
    gen.reply = (req) => `${req.personaId} answers ${req.context.lastHumanText.split(':')[0]}.`;
    const first = h.fake.say(enabled.id, h.people.human.id, 'first: I failed my driving test again');
    await until(() => gen.requests.some((r) => r.personaId === 'catalyst'), 'the second turn to start');
    await h.say(enabled, 'second: actually it is about my dad, not the test');
    await h.settle(first.id);

    expect(gen.aborted.map((r) => r.personaId)).toEqual(['catalyst']);
    // Anchor spoke last, so it does not open the new round (it was not named).
    expect(h.personaPosts(enabled).map((m) => m.content)).toEqual(['anchor answers first.', 'beacon answers second.', 'catalyst answers second.']);
  });

  it('a 429 is retried and the turn posted once; a lost response is retried without a duplicate', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    h.policy.speakers = ['anchor'];
    h.fake.fail({ method: 'POST', path: MESSAGES, status: 429, headers: { 'retry-after': '0.2' } });
    await h.say(enabled, 'Is anyone there?');
    const attempts = h.requests('POST', MESSAGES);
    expect(attempts.map((r) => r.status)).toEqual([429, 200]);
    expect((attempts[0]!.body as { nonce: string }).nonce).toBe((attempts[1]!.body as { nonce: string }).nonce);
    expect(h.personaPosts(enabled)).toHaveLength(1);

    // Discord created the message but the answer was lost (502): the retry carries the same
    // nonce, so Discord returns the first message instead of posting it again.
    h.fake.fail({ method: 'POST', path: MESSAGES, status: 502, afterHandling: true });
    await h.say(enabled, 'Hello again.');
    expect(h.requests('POST', MESSAGES).slice(2).map((r) => r.status)).toEqual([502, 200]);
    const posts = h.personaPosts(enabled);
    expect(posts).toHaveLength(2);
    const logged = h.runtime.db.prepare('SELECT platform_id FROM messages WHERE is_bot = 1 ORDER BY id').pluck().all();
    expect(logged).toEqual(posts.map((m) => m.id));
  });

  it('paces posts per channel so a burst never runs into the channel limit', async () => {
    const burst = async (harness: Harness) => {
      const { enabled } = harness.channels;
      harness.fake.channelLimit = { messages: 3, windowMs: 600 };
      harness.runtime.store.setChannelSetting(channelKeyOf('discord', enabled.id), 'maxBotTurns', 4, 'test');
      harness.policy.speakers = ['anchor', 'catalyst', 'beacon', 'guide'];
      await harness.say(enabled, 'First thing on my mind.');
      await harness.say(enabled, 'And a second thing.');
      expect(harness.personaPosts(enabled)).toHaveLength(8);
      return harness.requests('POST', MESSAGES).filter((r) => r.status === 429).length;
    };
    // Paced to the limit: no 429 at all.
    h = await Harness.start({ pacing: { messagesPerWindow: 3, windowMs: 600 } });
    expect(await burst(h)).toBe(0);
    await h.close();
    // The same burst unpaced does hit the limit (and is retried, so every turn still arrives once).
    h = await Harness.start({ pacing: { messagesPerWindow: 1000, windowMs: 1 } });
    expect(await burst(h)).toBeGreaterThan(0);
  });

  it('splits a 2500-character turn at a sentence boundary', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    h.policy.speakers = ['guide'];
    const sentence = 'Here is one more careful thought about taking the next small step today. ';
    const long = sentence.repeat(Math.ceil(2500 / sentence.length)).slice(0, 2500).replace(/\s*\S*$/, '.');
    expect(long.length).toBeGreaterThan(2400);
    h.gen.reply = () => long;
    await h.say(enabled, 'Give me everything you have.');
    const posts = h.personaPosts(enabled);
    expect(posts).toHaveLength(2);
    for (const p of posts) expect(p.content.length).toBeLessThanOrEqual(2000);
    expect(posts[0]!.content.endsWith('today.')).toBe(true);
    expect(`${posts[0]!.content} ${posts[1]!.content}`).toBe(long);
    // Only the first part replies to the person.
    const sends = h.requests('POST', MESSAGES);
    expect(sends.map((r) => (r.body as { message_reference?: unknown }).message_reference !== undefined)).toEqual([true, false]);
  });

  it('labels every message of the offline voice', async () => {
    h = await Harness.start({ generator: null });
    const { enabled } = h.channels;
    await h.say(enabled, 'My cat died last week and the flat feels empty.');
    const posts = h.personaPosts(enabled);
    expect(posts.length).toBeGreaterThan(0);
    for (const p of posts) expect(p.content.endsWith(`\n${OFFLINE_LABEL}`)).toBe(true);
  });

  it('threads work like their channel, and a DM to a persona bot is 1:1 with that persona', async () => {
    h = await Harness.start();
    const thread = h.fake.state.addThread(h.channels.enabled, 'exam worries');
    h.fake.announceThread(thread);
    await until(() => h!.platform.director.channels.cache.has(thread.id), 'the thread to be known');
    await h.say(thread, 'Starting a thread about my exams.');
    expect(h.personaPosts(thread).map((m) => m.author.username)).toEqual(['Anchor', 'Catalyst']);

    const dm = h.fake.state.dmChannel(h.people.human.id, h.bots.personas.beacon!.user.id);
    await h.say(dm, 'Hi Beacon, can I talk to just you?');
    const replies = h.personaPosts(dm);
    expect(replies.map((m) => m.author.username)).toEqual(['Beacon']);
    expect(h.requests('POST', new RegExp(`^/channels/${dm.id}/messages$`)).map((r) => h!.personaOfToken(r.token))).toEqual(['beacon']);
  });

  it('stores 👍/👎 on persona messages as feedback', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    h.policy.speakers = ['anchor'];
    const human = await h.say(enabled, 'I got the job!');
    const [post] = h.personaPosts(enabled);
    h.fake.react(enabled.id, post!.id, h.people.other.id, '👍');
    h.fake.react(enabled.id, human.id, h.people.other.id, '👎');
    await until(() => h!.runtime.db.prepare('SELECT COUNT(*) FROM feedback').pluck().get() === 1, 'the reaction to be stored');
    expect(h.runtime.db.prepare('SELECT message_id, user_id, kind, value FROM feedback').get()).toEqual({ message_id: post!.id, user_id: h.people.other.id, kind: 'reaction', value: 1 });
  });

  it('counts a reaction on any part of a split turn for that turn, and deletes it when taken back', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    const db = h.runtime.db;
    h.policy.speakers = ['guide'];
    const sentence = 'Here is one more careful thought about taking the next small step today. ';
    h.gen.reply = () => sentence.repeat(40).trim();
    const human = await h.say(enabled, 'Tell me everything.');
    const parts = h.personaPosts(enabled);
    expect(parts).toHaveLength(2);
    const [first, second] = [parts[0]!.id, parts[1]!.id];
    const turn = db.prepare('SELECT platform_id AS id, round_id AS roundId FROM messages WHERE is_bot = 1').all() as { id: string; roundId: string }[];
    expect(turn).toEqual([{ id: first, roundId: expect.any(String) }]);
    const roundId = turn[0]!.roundId;
    expect(db.prepare('SELECT part_id, turn_id, part_index FROM message_parts ORDER BY part_index').all()).toEqual([
      { part_id: first, turn_id: first, part_index: 0 },
      { part_id: second, turn_id: first, part_index: 1 },
    ]);

    const rows = () => db.prepare('SELECT message_id AS messageId, round_id AS roundId, user_id AS userId, value FROM feedback ORDER BY id').all();
    const count = () => db.prepare('SELECT COUNT(*) FROM feedback').pluck().get() as number;
    const has = (userId: string, value: number) => db.prepare('SELECT 1 FROM feedback WHERE user_id = ? AND value = ?').pluck().get(userId, value) === 1;
    const row = (userId: string, value: number) => ({ messageId: first, roundId, userId, value });
    const { other: sam, human: riley } = h.people;

    // 👍 on the second part is feedback on the turn (its first part's id) and its round.
    h.fake.react(enabled.id, second, sam.id, '👍');
    await until(() => count() === 1, 'the reaction on part 2 to be stored');
    expect(rows()).toEqual([row(sam.id, 1)]);
    h.fake.react(enabled.id, first, riley.id, '👎');
    h.fake.react(enabled.id, second, sam.id, '👎🏽');
    await until(() => count() === 3, 'the reactions on both parts to be stored');

    // Reactions that are never stored: not 👍/👎, on Riley's own message, from a persona bot, from
    // the director. The gateway delivers in order, so once Riley's 👍 after them is stored, they were handled.
    const noise: [string, string, string][] = [
      [second, sam.id, '🎉'],
      [human.id, sam.id, '👍'],
      [second, h.bots.personas.anchor!.user.id, '👍'],
      [first, h.bots.director.user.id, '👎'],
    ];
    for (const [message, user, emoji] of noise) h.fake.react(enabled.id, message, user, emoji);
    h.fake.react(enabled.id, second, riley.id, '👍');
    await until(() => has(riley.id, 1), "Riley's 👍 to be stored");
    expect(rows()).toEqual([row(sam.id, 1), row(riley.id, -1), row(sam.id, -1), row(riley.id, 1)]);

    // Taking those back changes nothing; Sam taking back the 👎🏽, then the 👍 (on the part where
    // each was given), deletes that reaction's row and only it.
    for (const [message, user, emoji] of noise) h.fake.unreact(enabled.id, message, user, emoji);
    h.fake.unreact(enabled.id, second, sam.id, '👎🏽');
    await until(() => !has(sam.id, -1), "Sam's 👎🏽 to be withdrawn");
    expect(rows()).toEqual([row(sam.id, 1), row(riley.id, -1), row(riley.id, 1)]);
    h.fake.unreact(enabled.id, second, sam.id, '👍');
    await until(() => !has(sam.id, 1), "Sam's 👍 to be withdrawn");
    expect(rows()).toEqual([row(riley.id, -1), row(riley.id, 1)]);

    // A person who opted out is not stored, and taking their reaction back deletes nobody else's.
    h.runtime.store.setOptOut('discord', sam.id, true);
    h.fake.react(enabled.id, second, sam.id, '👍');
    h.fake.unreact(enabled.id, second, sam.id, '👍');
    h.fake.unreact(enabled.id, first, riley.id, '👎');
    await until(() => !has(riley.id, -1), "Riley's 👎 to be withdrawn");
    expect(rows()).toEqual([row(riley.id, 1)]);

    // The parts go with their turn (retention and forget-me delete turns without knowing of parts).
    db.prepare('DELETE FROM messages WHERE platform_id = ?').run(first);
    expect(db.prepare('SELECT COUNT(*) FROM message_parts').pluck().get()).toBe(0);
  });

  it('resumes after the gateway connection drops, replaying what was missed', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    h.policy.speakers = ['beacon'];
    const before = h.fake.sessionOf(h.bots.director.token)!.resumed;
    h.fake.dropConnection(h.bots.director.token);
    await until(() => !h!.fake.connected(h!.bots.director.token), 'the connection to drop');
    const message = h.fake.say(enabled.id, h.people.human.id, 'Did you miss me?');
    await h.settle(message.id);
    expect(h.fake.sessionOf(h.bots.director.token)!.resumed).toBe(before + 1);
    expect(h.personaPosts(enabled).map((m) => m.author.username)).toEqual(['Beacon']);
  });
});

describe('Discord identities', () => {
  it('webhook mode posts as a persona without a token, and recreates a deleted webhook', async () => {
    h = await Harness.start({ withoutToken: ['guide'], env: { DISCORD_WEBHOOKS: 'on' } });
    const { enabled } = h.channels;
    h.policy.speakers = ['guide'];
    await h.say(enabled, 'What should I do first?');
    const [post] = h.personaPosts(enabled);
    expect(post).toMatchObject({ author: { username: 'Guide', bot: true } });
    const execute = h.requests('POST', /^\/webhooks\/\d+\/[^/]+$/);
    expect(execute).toHaveLength(1);
    expect(execute[0]!.query).toEqual({ wait: 'true' });
    expect(execute[0]!.body).toMatchObject({ username: 'Guide', avatar_url: expect.stringMatching(/guide/), allowed_mentions: { parse: [] } });
    expect(execute[0]!.token).toBeUndefined();
    // Its own message came back through the gateway and started no round.
    expect(h.runtime.db.prepare('SELECT COUNT(DISTINCT trigger_id) FROM decisions').pluck().get()).toBe(1);

    // Someone deletes the webhook: the next post creates a new one and goes through.
    h.fake.state.webhooks.clear();
    await h.say(enabled, 'Guide, and after that?');
    expect(h.personaPosts(enabled)).toHaveLength(2);
    expect(h.requests('POST', /^\/channels\/\d+\/webhooks$/)).toHaveLength(2);
    expect(h.requests('POST', /^\/webhooks\//).map((r) => r.status)).toEqual([200, 404, 200]);
  });

  it('fails start-up naming the persona whose token is missing or rejected', async () => {
    h = await Harness.start({ withoutToken: ['beacon'], noStart: true });
    await expect(h.connect()).rejects.toThrow(/persona "beacon" \(support pack\) has no token: set DISCORD_TOKEN_BEACON/);

    h.env.DISCORD_TOKEN_BEACON = h.bots.personas.beacon!.token;
    h.env.DISCORD_TOKEN_CATALYST = 'not-a-real-token';
    await expect(h.connect()).rejects.toThrow(/persona "catalyst" \(DISCORD_TOKEN_CATALYST\): Discord rejected the token/);
    // Nothing stays connected after a failed start.
    await until(() => !h!.fake.connected(h!.bots.director.token), 'the director to disconnect');
    expect(h.fake.connected(h.bots.personas.anchor!.token)).toBe(false);
  });
});
