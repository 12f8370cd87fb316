// Moderator alerts end to end: a crisis message in a Discord guild or Slack workspace reaches the
// moderators' channel (the server's own setting, else the environment's) with a link, posted by
// the app itself, while the conversation gets the calm message and no persona turn.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.ts';
import { deliverAlerts } from '../src/safety/alerts.ts';
import { SafetyStore } from '../src/safety/store.ts';
import { Harness } from './fake-discord/harness.ts';
import { startTestbed, type Testbed } from './fake-slack/testbed.ts';
import { makeEngine, ScriptedGenerator } from './support/core.ts';

const CRISIS = 'I have the pills ready and I want to die tonight';

let h: Harness | undefined;
let bed: Testbed | undefined;
afterEach(async () => {
  await h?.close();
  await bed?.close();
  h = undefined;
  bed = undefined;
});

describe('moderator alerts', () => {
  it('Discord: the director posts the alert with a message link in the guild\'s alert channel', async () => {
    h = await Harness.start();
    const mods = h.fake.state.addChannel(h.guild.id, 'moderators');
    new SafetyStore(h.runtime.db).setSpaceSettings('discord', h.guild.id, { alertChannel: mods.id }, 'test');
    const { enabled } = h.channels;
    const message = await h.say(enabled, CRISIS);

    await eventually(() => h!.requests('POST', new RegExp(`^/channels/${mods.id}/messages$`)).length > 0);
    const alerts = h.requests('POST', new RegExp(`^/channels/${mods.id}/messages$`));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.token).toBe(h.bots.director.token);
    const body = alerts[0]!.body as { content: string; allowed_mentions: unknown };
    expect(body.content).toContain(`https://discord.com/channels/${h.guild.id}/${enabled.id}/${message.id}`);
    expect(body.content).not.toContain('pills');
    expect(body.allowed_mentions).toEqual({ parse: [] });
    // In the conversation: the calm message from the director, no persona turn.
    expect(h.personaPosts(enabled)).toHaveLength(0);
    const notice = h.requests('POST', new RegExp(`^/channels/${enabled.id}/messages$`)).find((r) => r.token === h!.bots.director.token);
    expect((notice!.body as { content: string }).content).toContain('988');
  });

  it("Slack: the app posts the alert in MASCOT_SAFETY_ALERT_CHANNEL_SLACK with the message's archive link", async () => {
    bed = await startTestbed({ identity: 'customize', config: { MASCOT_SAFETY_ALERT_CHANNEL_SLACK: 'C0MODS001' } });
    const channel = 'C0CARE001';
    await (await bed.fake.slash(bed.admin.id, channel, 'channel on')).reply;
    const said = await bed.fake.say(bed.dana.id, channel, CRISIS);
    await bed.quiet();
    await eventually(() => bed!.fake.messages.some((m) => m.channel === 'C0MODS001'));
    const alerts = bed.fake.messages.filter((m) => m.channel === 'C0MODS001');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.text).toContain(`https://slack.com/archives/${channel}/p${said.ts.replace('.', '')}`);
    expect(alerts[0]!.text).not.toContain('pills');
    const inChannel = bed.fake.botPosts(channel);
    expect(inChannel).toHaveLength(1); // the calm message only
    expect(inChannel[0]!.text).toContain('emergency');
  });

  it('an alert with nowhere to go is logged, and other platforms\' alerts are left to their adapter', async () => {
    const { engine } = makeEngine(new ScriptedGenerator());
    const sent: string[] = [];
    const stop = deliverAlerts(engine, 'discord', { log: silentLogger(), send: async (c, t) => void sent.push(`${c}|${t}`) });
    engine.emit('alert', { channelKey: 'discord:1', kind: 'crisis', text: 'nowhere' });
    engine.emit('alert', { channelKey: 'slack:C1', kind: 'crisis', text: 'not ours', alertChannelId: 'C9' });
    engine.emit('alert', { channelKey: 'discord:2', kind: 'collapse', text: 'health', alertChannelId: '99' });
    stop();
    engine.emit('alert', { channelKey: 'discord:3', kind: 'crisis', text: 'after stop', alertChannelId: '99' });
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual(['99|health']);
  });
});

/** Alerts are posted alongside the round, not as part of it: wait (bounded) until one arrived. */
async function eventually(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}
