// The safety gate in the real engine with a real SQLite file: a crisis message bypasses the
// director, gets one calm message with the right resources, keeps the personas quiet, alerts
// moderators with a link, is recorded, and keeps the conversation around it out of training data.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { silentLogger } from '../src/log.ts';
import type { Outlet } from '../src/platform/platform.ts';
import { createRuntime } from '../src/runtime.ts';
import { REPEAT_AFTER_MS } from '../src/safety/gate.ts';
import { channelKeyOf, type ModeratorAlert } from '../src/session/engine.ts';
import { humanEvent, RecordingOutlet, ScriptedGenerator, tempDir } from './support/core.ts';
import { makeGatedEngine } from './support/safety.ts';

const CRISIS = "I can't do this anymore, I want to kill myself";

function setup(o: { dbFile?: string; quietMinutes?: number; alertChannels?: Record<string, string>; clock?: { now: number } } = {}) {
  const generator = new ScriptedGenerator();
  const built = makeGatedEngine(generator, {
    engine: { alwaysOnPlatforms: ['console', 'discord', 'slack'] },
    dbFile: o.dbFile,
    gate: {
      quietMinutes: o.quietMinutes ?? 30,
      ...(o.alertChannels ? { alertChannels: o.alertChannels } : {}),
      ...(o.clock ? { now: () => o.clock!.now } : {}),
    },
  });
  const alerts: ModeratorAlert[] = [];
  built.engine.on('alert', (a) => alerts.push(a));
  return { ...built, generator, alerts };
}

const discordEvent = (text: string, extra: Parameters<typeof humanEvent>[1] = {}) =>
  humanEvent(text, { platform: 'discord', channelId: 'c1', spaceId: 'g1', author: { id: 'u1', name: 'Sam', isBot: false }, ...extra });

describe('safety gate', () => {
  it('bypasses the director: one calm notice with the pack resources, an alert with a link, a recorded event', async () => {
    const { engine, generator, alerts, safety, db } = setup({ alertChannels: { discord: '555000111' } });
    const outlet = new RecordingOutlet();
    const event = discordEvent(CRISIS);
    await engine.receive(event, outlet);

    expect(generator.requests).toHaveLength(0);
    expect(outlet.posts).toHaveLength(0);
    expect(outlet.notices).toHaveLength(1);
    expect(outlet.notices[0]).toContain('988');
    expect(outlet.notices[0]).toContain('Samaritans');

    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ kind: 'crisis', channelKey: 'discord:c1', alertChannelId: '555000111', link: `https://discord.com/channels/g1/c1/${event.messageId}` });
    expect(alerts[0]!.text).toContain(alerts[0]!.link!);
    expect(alerts[0]!.text).not.toMatch(/kill/i); // never the person's words

    const [recorded] = safety.events();
    expect(recorded).toMatchObject({ channelKey: 'discord:c1', messageId: event.messageId, authorId: 'u1', category: 'suicide', source: 'rules', responded: true, alerted: true });
    expect(recorded!.patterns).toContain('suicide.kill-self');
    // The message itself was accepted and logged like any other.
    expect(db.prepare('SELECT text FROM messages WHERE platform_id = ?').pluck().get(event.messageId)).toBe(CRISIS);
  });

  it('keeps the personas quiet in that channel only, until the quiet period ends', async () => {
    const { engine, generator } = setup();
    const outlet = new RecordingOutlet();
    await engine.receive(discordEvent(CRISIS), outlet);
    await engine.receive(discordEvent('thank you, I am still here'), outlet);
    expect(outlet.posts).toHaveLength(0);

    const elsewhere = new RecordingOutlet();
    await engine.receive(discordEvent('I feel lonely since I moved', { channelId: 'c2' }), elsewhere);
    expect(elsewhere.posts.length).toBeGreaterThan(0);

    engine.session(channelKeyOf('discord', 'c1')).quietUntil = Date.now() - 1; // the quiet period is over
    const before = generator.requests.length;
    await engine.receive(discordEvent('I talked to my sister, I feel a bit better'), outlet);
    expect(generator.requests.length).toBeGreaterThan(before);
    expect(outlet.posts.length).toBeGreaterThan(0);
  });

  it('cancels the round that was running when the crisis message came', async () => {
    const { engine, generator } = setup();
    generator.hold = () => true;
    const outlet = new RecordingOutlet();
    const first = engine.receive(discordEvent('work has been so hard lately'), outlet);
    await vi_waitFor(() => generator.requests.length === 1);
    await engine.receive(discordEvent(CRISIS), outlet);
    await first;
    expect(generator.aborted).toHaveLength(1);
    expect(outlet.posts).toHaveLength(0);
    expect(outlet.notices).toHaveLength(1);
  });

  it('posts the calm message as the first persona where notices are missing or fail', async () => {
    const { engine } = setup();
    const posts: { persona: string; text: string }[] = [];
    const noNotice: Outlet = { post: async (persona, text) => (posts.push({ persona: persona.id, text }), { messageId: `b${posts.length}` }) };
    await engine.receive(discordEvent(CRISIS), noNotice);
    expect(posts).toHaveLength(1);
    expect(posts[0]!.persona).toBe(engine.packs.get('support')!.personas[0]!.id);
    expect(posts[0]!.text).toContain('988');

    const failing: Outlet = { ...noNotice, notice: async () => Promise.reject(new Error('missing permission')) };
    await engine.receive(discordEvent(CRISIS, { channelId: 'c9' }), failing);
    expect(posts).toHaveLength(2);
  });

  it("uses a server's own resources, alert channel and quiet period", async () => {
    const { engine, alerts, safety } = setup({ alertChannels: { discord: '555000111' } });
    safety.setSpaceSettings('discord', 'g1', { resources: 'Call the Example Line at 0800 000 000, or DM a moderator.', alertChannel: '777000222', quietMinutes: 5 }, 'mod');
    const outlet = new RecordingOutlet();
    const start = Date.now();
    await engine.receive(discordEvent(CRISIS), outlet);
    expect(outlet.notices[0]).toContain('Example Line');
    expect(outlet.notices[0]).not.toContain('988');
    expect(alerts[0]!.alertChannelId).toBe('777000222');
    const quiet = engine.session('discord:c1').quietUntil - start;
    expect(quiet).toBeGreaterThanOrEqual(5 * 60_000 - 1000);
    expect(quiet).toBeLessThanOrEqual(5 * 60_000 + 1000);
    // Another server falls back to the environment's channel and the pack's resources.
    await engine.receive(discordEvent(CRISIS, { channelId: 'c5', spaceId: 'g2' }), outlet);
    expect(alerts[1]!.alertChannelId).toBe('555000111');
    expect(outlet.notices[1]).toContain('988');
  });

  it('a further crisis message extends the quiet period; message and alert repeat only after ten minutes', async () => {
    const clock = { now: Date.now() };
    const { engine, alerts, safety } = setup({ clock });
    const outlet = new RecordingOutlet();
    await engine.receive(discordEvent(CRISIS), outlet);
    const firstQuiet = engine.session('discord:c1').quietUntil;
    clock.now += 60_000;
    await engine.receive(discordEvent('I really want to die'), outlet);
    expect(outlet.notices).toHaveLength(1);
    expect(alerts).toHaveLength(1);
    expect(engine.session('discord:c1').quietUntil).toBe(firstQuiet + 60_000);
    expect(safety.events()).toHaveLength(2);
    expect(safety.events()[0]).toMatchObject({ responded: false, alerted: false });

    clock.now += REPEAT_AFTER_MS;
    await engine.receive(discordEvent('I have the pills ready'), outlet);
    expect(outlet.notices).toHaveLength(2);
    expect(alerts).toHaveLength(2);
  });

  it('the quiet period survives a restart', async () => {
    const dbFile = path.join(tempDir(), 'restart.db');
    const a = setup({ dbFile });
    await a.engine.receive(discordEvent(CRISIS), new RecordingOutlet());
    a.db.close();

    const b = setup({ dbFile });
    const outlet = new RecordingOutlet();
    await b.engine.receive(discordEvent('hello again'), outlet);
    expect(outlet.posts).toHaveLength(0);
    expect(b.generator.requests).toHaveLength(0);
  });

  it('an opted-out person still gets the response; nothing of theirs is logged', async () => {
    const { engine, store, safety, db } = setup();
    store.setOptOut('discord', 'u1', true);
    const outlet = new RecordingOutlet();
    const event = discordEvent(CRISIS);
    await engine.receive(event, outlet);
    expect(outlet.notices).toHaveLength(1);
    expect(safety.events()[0]!.authorId).toBeUndefined();
    expect(db.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(0);
  });

  it('responds even when the database fails', async () => {
    const { engine, db } = setup();
    db.exec('DROP VIEW training_exclusion_windows; DROP TABLE safety_events; DROP TABLE safety_spaces');
    const outlet = new RecordingOutlet();
    await engine.receive(discordEvent(CRISIS), outlet);
    expect(outlet.notices).toHaveLength(1);
    expect(outlet.posts).toHaveLength(0);
  });

  it('keeps the channel out of training data from the crisis until twelve more messages and the quiet period have passed', async () => {
    const clock = { now: 1_000 }; // the quiet period (0 minutes) ends at once: the twelve messages decide
    const { engine, store, db } = setup({ clock, quietMinutes: 0 });
    const event = discordEvent(CRISIS, { at: 1_000 });
    await engine.receive(event, new RecordingOutlet());
    for (let i = 1; i <= 14; i++) store.logMessage({ channelKey: 'discord:c1', platformId: `later-${i}`, authorId: 'u1', authorName: 'Sam', isBot: false, text: `message ${i}`, at: 1_000 + i });
    store.logMessage({ channelKey: 'discord:c2', platformId: 'other-channel', authorId: 'u1', authorName: 'Sam', isBot: false, text: 'elsewhere', at: 1_005 });
    const excluded = db
      .prepare(
        `SELECT platform_id FROM messages m WHERE EXISTS (SELECT 1 FROM training_exclusion_windows w WHERE w.channel_key = m.channel_key AND m.at BETWEEN w.from_at AND w.until_at) ORDER BY at`,
      )
      .pluck()
      .all();
    expect(excluded).toEqual([event.messageId, ...Array.from({ length: 12 }, (_, i) => `later-${i + 1}`)]);
  });
});

describe('safety gate in the runtime', () => {
  it('createRuntime wires the gate and the alert event', async () => {
    const dir = tempDir();
    const runtime = createRuntime(loadConfig({ MASCOT_DB: path.join(dir, 'rt.db'), MASCOT_LOG_LEVEL: 'silent', MASCOT_PACING_MS: '0', MASCOT_SAFETY_QUIET_MINUTES: '10' }), silentLogger());
    try {
      const alerts: ModeratorAlert[] = [];
      runtime.engine.on('alert', (a) => alerts.push(a));
      const outlet = new RecordingOutlet();
      await runtime.engine.receive(humanEvent('I have a plan to end my life tonight', { channelId: 'rt' }), outlet);
      expect(outlet.notices).toHaveLength(1);
      expect(outlet.posts).toHaveLength(0);
      expect(alerts.map((a) => a.kind)).toEqual(['crisis']);
      expect(alerts[0]!.link).toBeUndefined(); // the console has no message links
      await runtime.engine.receive(humanEvent('I moved to a new city and I feel lonely', { channelId: 'rt-2' }), outlet);
      expect(outlet.posts.length).toBeGreaterThan(0);
    } finally {
      runtime.close();
    }
  });
});

async function vi_waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}
