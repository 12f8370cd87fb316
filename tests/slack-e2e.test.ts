// End to end over Slack's HTTP receiver: signed requests from a local fake Slack to the real Bolt
// app, Web API calls from the real Bolt/WebClient to the fake, real SQLite, the offline voice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMessage } from './fake-slack/server.ts';
import { startTestbed, type Testbed } from './fake-slack/testbed.ts';

const MEET = 'C0MEET001';
const OTHER = 'C0OTHER01';

const blockText = (m: FakeMessage) => JSON.stringify(m.blocks ?? []);
/** The deterministic director of the testbed lets the meeting personas speak in pack order. */
const firstTwo = (bed: Testbed) => bed.runtime.packs.get('meeting')!.personas.slice(0, 2);

describe('Slack, one app posting each persona with its name and icon (chat:write.customize)', () => {
  let bed: Testbed;
  beforeAll(async () => {
    bed = await startTestbed({ identity: 'customize', env: { SLACK_MODERATOR_IDS: 'U0LEE0001' } });
    const on = await bed.fake.slash(bed.admin.id, MEET, 'channel on');
    expect(on.status).toBe(200);
    expect((await on.reply).response_type).toBe('ephemeral');
  });
  afterAll(() => bed?.close());

  it('answers a human message in an enabled channel with two personas in its thread', async () => {
    const { ts, delivery } = await bed.fake.say(bed.dana.id, MEET, 'Should we move the launch to March? QA found two blockers.');
    expect(delivery?.status).toBe(200);
    await bed.quiet();

    const posts = bed.fake.botPosts(MEET, ts);
    expect(posts.map((p) => p.username)).toEqual(firstTwo(bed).map((p) => p.displayName));
    expect(posts.map((p) => p.icon_emoji)).toEqual(firstTwo(bed).map((p) => p.identity.slack?.iconEmoji));
    expect(new Set(posts.map((p) => p.username)).size).toBe(2);
    expect(posts.every((p) => p.token === bed.director.token)).toBe(true);
    // Nothing lands outside the thread.
    expect(bed.fake.messages.filter((m) => m.bot_id && !m.thread_ts)).toEqual([]);
    // The offline voice is labelled on every message, in the blocks and in the notification text.
    for (const p of posts) {
      expect(p.text).toMatch(/\(offline voice\)$/);
      expect(blockText(p)).toContain('offline voice');
    }
  });

  it('keeps the meeting in the thread, and its own posts coming back as events start no round', async () => {
    const { ts } = await bed.fake.say(bed.dana.id, MEET, 'Kickoff for the pricing page review.');
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, ts)).toHaveLength(2);
    await bed.fake.say(bed.lee.id, MEET, 'I worry the pricing table is too long for mobile.', ts);
    await bed.quiet();
    const posts = bed.fake.botPosts(MEET, ts);
    // Two more turns for Lee's reply, in the same thread; the four echoes of our posts added none.
    expect(posts).toHaveLength(4);
    const rounds = bed.runtime.db.prepare('SELECT COUNT(DISTINCT round_id) FROM decisions WHERE channel_key = ?').pluck().get(`slack:${MEET}:${ts}`);
    expect(rounds).toBe(2);
  });

  it('answers health checks next to the events endpoint', async () => {
    const res = await fetch(`http://127.0.0.1:${bed.platform.port}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('ok');
  });

  it('stays quiet in a channel nobody enabled unless the app is mentioned', async () => {
    const quiet = await bed.fake.say(bed.dana.id, OTHER, 'Just thinking out loud here.');
    await bed.quiet();
    expect(bed.fake.botPosts(OTHER, quiet.ts)).toEqual([]);

    const asked = await bed.fake.say(bed.dana.id, OTHER, `<@${bed.director.userId}> can you help us plan the offsite?`);
    await bed.quiet();
    expect(bed.fake.botPosts(OTHER, asked.ts)).toHaveLength(2);
    const logged = bed.runtime.db.prepare("SELECT text FROM messages WHERE platform_id = ? AND is_bot = 0").pluck().get(asked.ts);
    expect(logged).toBe('@mascot can you help us plan the offsite?');
  });

  it('rejects a bad signature and an old timestamp without running a round', async () => {
    const root = bed.fake.record({ channel: MEET, user: bed.dana.id, text: 'Forged or stale: should not be answered.' });
    const body = bed.fake.eventBody({ type: 'message', channel: MEET, channel_type: 'channel', user: bed.dana.id, text: root.text, ts: root.ts, team: bed.fake.teamId });

    const forged = await bed.fake.deliver(body, { secret: 'not-the-signing-secret' });
    expect(forged?.status).toBe(401);
    const stale = await bed.fake.deliver(body, { timestamp: Math.floor(Date.now() / 1000) - 10 * 60 });
    expect(stale?.status).toBe(401);
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, root.ts)).toEqual([]);

    // The same body, properly signed, is answered: the rejections were about the signature.
    const genuine = await bed.fake.deliver(body);
    expect(genuine?.status).toBe(200);
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, root.ts)).toHaveLength(2);
  });

  it('runs one round for an event Slack delivers twice', async () => {
    const { ts, body } = await bed.fake.say(bed.dana.id, MEET, 'Do we ship the beta to everyone on Monday?');
    const retry = await bed.fake.deliver(body, { retryNum: 1 });
    expect(retry?.status).toBe(200);
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, ts)).toHaveLength(2);
    const rounds = bed.runtime.db.prepare('SELECT COUNT(DISTINCT round_id) FROM decisions WHERE trigger_id = ?').pluck().get(ts);
    expect(rounds).toBe(1);
    const receipt = bed.runtime.db.prepare('SELECT team_id FROM slack_event_receipts WHERE event_id = ?').pluck().get(body.event_id);
    expect(receipt).toBe(bed.fake.teamId);
  });

  it('drops a redelivery that arrives after a restart, even for a person whose messages are not stored', async () => {
    // Opted-out people are not logged, so only the event receipts remember their message.
    await (await bed.fake.slash(bed.lee.id, MEET, 'optout')).reply;
    const { ts, body } = await bed.fake.say(bed.lee.id, MEET, 'Can someone own the release notes?');
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, ts)).toHaveLength(2);
    await bed.restart();
    const retry = await bed.fake.deliver(body, { retryNum: 2 });
    expect(retry?.status).toBe(200);
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, ts)).toHaveLength(2);
    await (await bed.fake.slash(bed.lee.id, MEET, 'optin')).reply;
  });

  it('lets a workspace admin or a configured moderator change a persona, and refuses everyone else', async () => {
    const scope = `slack:${MEET}`;
    const member = await bed.fake.slash(bed.dana.id, MEET, 'persona set skeptic talkativeness 0.9');
    expect(member.status).toBe(200);
    const refused = await member.reply;
    expect(refused.response_type).toBe('ephemeral');
    expect(refused.text).toBe('`persona set` is for moderators: workspace admins and owners, and people the operator listed.');
    expect(bed.runtime.store.personaOverrides('meeting', 'skeptic', scope)).toEqual({});

    const admin = await (await bed.fake.slash(bed.admin.id, MEET, 'persona set skeptic talkativeness 0.9')).reply;
    expect(admin.response_type).toBe('ephemeral');
    expect(bed.runtime.store.personaOverrides('meeting', 'skeptic', scope)).toEqual({ talkativeness: 0.9 });

    // Lee is no admin but is on SLACK_MODERATOR_IDS.
    await (await bed.fake.slash(bed.lee.id, MEET, 'persona set skeptic talkativeness 0.4')).reply;
    expect(bed.runtime.store.personaOverrides('meeting', 'skeptic', scope)).toEqual({ talkativeness: 0.4 });
    const history = bed.runtime.store.personaHistory('meeting', 'skeptic', scope);
    expect(history.map((h) => h.actor)).toEqual([expect.stringContaining('slack:U0ADMIN01'), expect.stringContaining('slack:U0LEE0001')]);
  });

  it('rates the last round of the newest thread, and pause stops the channel', async () => {
    const { ts } = await bed.fake.say(bed.dana.id, MEET, 'Can we agree the agenda for Thursday?');
    await bed.quiet();
    const rated = await (await bed.fake.slash(bed.dana.id, MEET, 'feedback 4 "the skeptic\'s question helped"')).reply;
    expect(rated.text).toMatch(/4\/5/);
    const row = bed.runtime.db.prepare("SELECT channel_key AS channelKey, value, note, message_id AS messageId FROM feedback WHERE user_id = ? AND kind = 'rating'").get(bed.dana.id);
    expect(row).toEqual({ channelKey: `slack:${MEET}:${ts}`, value: 4, note: "the skeptic's question helped", messageId: bed.fake.botPosts(MEET, ts).at(-1)!.ts });

    await (await bed.fake.slash(bed.admin.id, MEET, 'pause')).reply;
    const paused = await bed.fake.say(bed.dana.id, MEET, 'Anyone there?');
    await bed.quiet();
    expect(bed.fake.botPosts(MEET, paused.ts)).toEqual([]);
    await (await bed.fake.slash(bed.admin.id, MEET, 'resume')).reply;
  });

  it('says what is accepted when an argument is wrong', async () => {
    const value = await (await bed.fake.slash(bed.admin.id, MEET, 'persona set skeptic talkativeness loud')).reply;
    expect(value.text).toMatch(/number/);
    const who = await (await bed.fake.slash(bed.admin.id, MEET, 'persona show nobody')).reply;
    expect(who.text).toMatch(/Accepted: .*facilitator/);
    const verb = await (await bed.fake.slash(bed.dana.id, MEET, 'dance')).reply;
    expect(verb.text).toMatch(/not a command/);
    const help = await (await bed.fake.slash(bed.dana.id, MEET, '')).reply;
    expect(help.text).toMatch(/recap \[thread link\]/);
    const personas = await (await bed.fake.slash(bed.admin.id, MEET, 'personas')).reply;
    expect(personas.text).toContain(`the <@${bed.director.userId}> app, posting as Skeptic`);
  });

  it('posts a recap that names the decisions and action items of the thread, as the scribe', async () => {
    const channel = 'C0PLAN001';
    const root = bed.fake.record({ channel, user: bed.dana.id, text: 'Launch planning: should we move the launch to March? QA found two blockers.' });
    const thread = (user: string, text: string) => bed.fake.record({ channel, user, text, thread_ts: root.ts });
    thread(bed.lee.id, 'I think we should go with the staged rollout starting at 10% of users.');
    thread(bed.admin.id, 'Agreed.');
    thread(bed.dana.id, 'Decision: the launch moves to March 14.');
    thread(bed.lee.id, `Action item: <@${bed.dana.id}> to update the roadmap by Friday.`);
    thread(bed.admin.id, "I'll send the customer announcement draft.");
    thread(bed.dana.id, 'Has anyone decided on pricing yet?');
    thread(bed.lee.id, "We haven't decided on pricing.");

    const link = `https://fake.slack.com/archives/${channel}/p${root.ts.replace('.', '')}`;
    const asked = await bed.fake.slash(bed.lee.id, channel, `recap ${link}`);
    expect(asked.status).toBe(200);
    const answer = await asked.reply;
    expect(answer.response_type).toBe('ephemeral');
    expect(answer.text).toMatch(/Scribe posted the recap in the thread: 2 decisions, 2 action items/);

    const [recap, ...more] = bed.fake.botPosts(channel, root.ts);
    expect(more).toEqual([]);
    expect(recap!.username).toBe('Scribe');
    const blocks = blockText(recap!);
    expect(blocks).toContain('staged rollout starting at 10% of users');
    expect(blocks).toContain('The launch moves to March 14');
    expect(blocks).toContain('*Dana*: update the roadmap _(due Friday)_');
    expect(blocks).toContain('*Alex*: send the customer announcement draft');
    // A question and a "haven't decided" are not decisions.
    expect(blocks).not.toMatch(/Decisions[^*]*pricing/);
    expect(blocks).toContain('extractive recap');
    expect(recap!.text).toMatch(/\(offline voice\)$/);
  });

  it('recaps the latest thread the companions took part in when no link is given', async () => {
    const { ts } = await bed.fake.say(bed.dana.id, MEET, "Let's go with the blue design. Lee will book the usability study by Thursday.");
    await bed.quiet();
    const answer = await (await bed.fake.slash(bed.dana.id, MEET, 'recap')).reply;
    expect(answer.text).toMatch(/1 decision, 1 action item: Lee: book the usability study \(due Thursday\)/);
    const recap = bed.fake.botPosts(MEET, ts).at(-1)!;
    expect(recap.username).toBe('Scribe');
    expect(blockText(recap)).toContain("Let's go with the blue design");
  });

  it('refuses a link to another channel and explains what a thread link is', async () => {
    const elsewhere = await (await bed.fake.slash(bed.dana.id, MEET, 'recap https://fake.slack.com/archives/C0ELSE001/p1700000000000100')).reply;
    expect(elsewhere.text).toMatch(/another channel/);
    const nonsense = await (await bed.fake.slash(bed.dana.id, MEET, 'recap yesterday')).reply;
    expect(nonsense.text).toMatch(/not a thread link/);
  });

  it('recaps the thread a message shortcut was used in', async () => {
    const channel = 'C0SHORT01';
    const root = bed.fake.record({ channel, user: bed.lee.id, text: 'Retro: what slowed us down this sprint?' });
    const reply = bed.fake.record({ channel, user: bed.dana.id, text: 'We agreed to cap work in progress at three items. Lee will update the board.', thread_ts: root.ts });
    const asked = await bed.fake.shortcut(bed.dana.id, 'mascot_recap', reply);
    expect(asked.status).toBe(200);
    expect((await asked.reply).text).toMatch(/1 decision, 1 action item/);
    expect(bed.fake.botPosts(channel, root.ts)).toHaveLength(1);
  });
});

describe('Slack, one app per persona', () => {
  let bed: Testbed;
  beforeAll(async () => {
    bed = await startTestbed({ identity: 'apps' });
    await (await bed.fake.slash(bed.admin.id, MEET, 'channel on')).reply;
  });
  afterAll(() => bed?.close());

  it('posts each turn with the persona app token, and knows those apps as its own', async () => {
    const { ts } = await bed.fake.say(bed.dana.id, MEET, 'Should we move the launch to March?');
    await bed.quiet();
    const posts = bed.fake.botPosts(MEET, ts);
    expect(posts.map((p) => p.token)).toEqual(firstTwo(bed).map((p) => bed.personaApps.get(p.id)!.token));
    // Own apps need no per-message name: Slack shows the app's own name and icon.
    expect(posts.every((p) => p.username === undefined)).toBe(true);
    // The persona apps' posts came back as events from other bots and started nothing.
    const echoed = bed.runtime.db.prepare('SELECT COUNT(*) FROM messages WHERE channel_key = ? AND is_bot = 1').pluck().get(`slack:${MEET}:${ts}`);
    expect(echoed).toBe(2);
  });

  it('answers a mention of one persona app with that persona only, outside enabled channels', async () => {
    const skeptic = bed.personaApps.get('skeptic')!;
    const { ts } = await bed.fake.say(bed.dana.id, OTHER, `<@${skeptic.userId}> what could go wrong with a Friday release?`);
    await bed.quiet();
    const posts = bed.fake.botPosts(OTHER, ts);
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((p) => p.token === skeptic.token)).toBe(true);
  });

  it('posts the recap with the scribe app', async () => {
    const channel = 'C0PLAN002';
    const root = bed.fake.record({ channel, user: bed.dana.id, text: 'Vendor choice for the data warehouse.' });
    bed.fake.record({ channel, user: bed.lee.id, text: "Let's go with vendor B. Dana to negotiate the contract by end of month.", thread_ts: root.ts });
    const answer = await (await bed.fake.slash(bed.dana.id, channel, `recap ${root.ts}`)).reply;
    expect(answer.text).toMatch(/Scribe posted the recap/);
    const [recap] = bed.fake.botPosts(channel, root.ts);
    expect(recap!.token).toBe(bed.personaApps.get('scribe')!.token);
    expect(blockText(recap!)).toContain('*Dana*: negotiate the contract _(due end of month)_');
  });
});

describe('Slack rate limits and lost answers', () => {
  let bed: Testbed;
  beforeAll(async () => {
    bed = await startTestbed({ identity: 'customize' });
    await (await bed.fake.slash(bed.admin.id, MEET, 'channel on')).reply;
  });
  afterAll(() => bed?.close());

  it('waits out a 429 and posts the turn once', async () => {
    bed.fake.failNext('chat.postMessage', { rateLimit: 1 });
    const { ts } = await bed.fake.say(bed.dana.id, MEET, 'Can we cut scope for the March release?');
    await bed.quiet();
    const limited = bed.fake.calls.filter((c) => c.method === 'chat.postMessage' && c.status === 429);
    expect(limited).toHaveLength(1);
    const posts = bed.fake.botPosts(MEET, ts);
    expect(posts.map((p) => p.username)).toEqual(firstTwo(bed).map((p) => p.displayName));
  });

  it('does not post twice when Slack stored a post but the answer was lost', async () => {
    bed.fake.failNext('chat.postMessage', { lostAfterStore: true });
    const { ts } = await bed.fake.say(bed.dana.id, MEET, 'Who owns the migration plan?');
    await bed.quiet();
    const posts = bed.fake.botPosts(MEET, ts);
    expect(posts).toHaveLength(2);
    expect(new Set(posts.map((p) => p.username)).size).toBe(2);
    // It looked for the turn in the thread before deciding.
    expect(bed.fake.calls.some((c) => c.method === 'conversations.replies' && String(c.args.include_all_metadata) === 'true')).toBe(true);
    // The turn whose answer was lost is in the transcript under the ts Slack gave it.
    const stored = bed.runtime.db.prepare('SELECT platform_id FROM messages WHERE channel_key = ? AND is_bot = 1 ORDER BY id').pluck().all(`slack:${MEET}:${ts}`);
    expect(stored).toEqual(posts.map((p) => p.ts));
  });
});
