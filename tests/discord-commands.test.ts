// /mascot and /mascot-me through the real discord.js director client against the fake Discord.
import { afterEach, describe, expect, it } from 'vitest';
import { PermissionFlagsBits } from 'discord.js';
import { channelKeyOf } from '../src/session/engine.ts';
import { Harness } from './fake-discord/harness.ts';
import type { FakeChannel, FakeUser } from './fake-discord/state.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Slash {
  command?: 'mascot' | 'mascot-me';
  verb: string;
  args?: Record<string, string | number>;
  user?: FakeUser;
  permissions?: bigint;
  channel?: FakeChannel;
  focused?: string;
}

/** Use a slash command as Discord would send it; resolves with the (first) response. */
async function slash(s: Slash): Promise<{ type: number; data: { content?: string; flags?: number; choices?: { name: string; value: string }[] } }> {
  const [first, second] = s.verb.split(' ') as [string, string | undefined];
  const leaf = Object.entries(s.args ?? {}).map(([name, value]) => ({
    name,
    type: typeof value === 'number' ? 4 : 3,
    value,
    ...(s.focused === name ? { focused: true } : {}),
  }));
  const options = second ? [{ type: 2, name: first, options: [{ type: 1, name: second, options: leaf }] }] : [{ type: 1, name: first, options: leaf }];
  const interaction = h!.fake.interact(h!.bots.director, {
    channelId: (s.channel ?? h!.channels.enabled).id,
    userId: (s.user ?? h!.people.moderator).id,
    name: s.command ?? 'mascot',
    options,
    permissions: s.permissions ?? PermissionFlagsBits.ManageGuild,
    autocomplete: s.focused !== undefined,
  });
  const state = h!.fake.state.interactions.get(interaction.id)!;
  return h!.fake.waitFor(() => state.responses[0], `a response to /${s.command ?? 'mascot'} ${s.verb}`) as never;
}

describe('Discord slash commands', () => {
  it('registers /mascot for Manage Server and /mascot-me for everyone, with persona autocomplete', async () => {
    h = await Harness.start();
    const put = h.requests('PUT', /^\/applications\/\d+\/commands$/);
    expect(put).toHaveLength(1);
    expect(put[0]!.token).toBe(h.bots.director.token);
    const [mascot, me] = put[0]!.body as { name: string; default_member_permissions?: string; contexts: number[]; options: { name: string; type: number; options?: { name: string; options?: { name: string; autocomplete?: boolean }[] }[] }[] }[];
    expect(mascot).toMatchObject({ name: 'mascot', default_member_permissions: String(PermissionFlagsBits.ManageGuild), contexts: [0] });
    expect(me).toMatchObject({ name: 'mascot-me', contexts: [0, 1] });
    expect(me!.default_member_permissions ?? null).toBeNull();
    expect(me!.options.map((o) => o.name)).toEqual(expect.arrayContaining(['optout', 'optin', 'forgetme', 'feedback', 'help']));
    const persona = mascot!.options.find((o) => o.name === 'persona')!;
    expect(persona.type).toBe(2);
    const set = persona.options!.find((o) => o.name === 'set')!;
    expect(set.options!.find((o) => o.name === 'persona')!.autocomplete).toBe(true);

    const choices = await slash({ verb: 'persona set', args: { persona: 'ca' }, focused: 'persona' });
    expect(choices.type).toBe(8);
    expect(choices.data.choices![0]).toEqual({ name: 'Catalyst (critical thinker)', value: 'catalyst' });
  });

  it('a moderator changes talkativeness (applied from the next turn); a non-moderator is refused', async () => {
    h = await Harness.start();
    const refused = await slash({ verb: 'persona set', args: { persona: 'anchor', field: 'talkativeness', value: '0.15' }, user: h.people.human, permissions: 0n });
    expect(refused).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(refused.data.content).toMatch(/is for moderators/);
    const key = channelKeyOf('discord', h.channels.enabled.id);
    expect(h.runtime.store.personaOverrides('support', 'anchor', key)).toEqual({});

    const done = await slash({ verb: 'persona set', args: { persona: 'anchor', field: 'talkativeness', value: '0.15' } });
    expect(done).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(done.data.content).toMatch(/Anchor's talkativeness is now 0\.15/);
    expect(done.data.content).toContain('undo with `/mascot persona rollback persona:anchor version:0`');
    expect(h.runtime.store.personaHistory('support', 'anchor', key)[0]).toMatchObject({ newValue: 0.15, actor: `morgan (discord:${h.people.moderator.id})` });

    const seen: number[] = [];
    h.runtime.engine.on('decision', (_k, _d, state) => seen.push(state.personas.find((p) => p.id === 'anchor')!.talkativeness));
    await h.say(h.channels.enabled, 'Something happened at work today.');
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([0.15]));

    const wrong = await slash({ verb: 'persona set', args: { persona: 'anchor', field: 'talkativeness', value: 'loud' } });
    expect(wrong.data).toMatchObject({ flags: 64, content: expect.stringMatching(/expected a number from 0 to 1/) });
  });

  it('accepts a configured moderator role without Manage Server', async () => {
    h = await Harness.start({ noStart: true });
    const role = h.fake.state.addRole(h.guild.id, 'Circle keepers');
    h.fake.state.addMember(h.guild.id, h.people.other.id, [role.id]);
    h.env.DISCORD_MODERATOR_IDS = role.id;
    await h.connect();
    const result = await slash({ verb: 'channel turns', args: { count: 1 }, user: h.people.other, permissions: 0n });
    expect(result.data.content).toMatch(/At most 1 bot turn/);
    expect(h.runtime.engine.channelConfig(channelKeyOf('discord', h.channels.enabled.id)).maxBotTurns).toBe(1);
  });

  it('channel on, pause and resume change what the bots do without a restart', async () => {
    h = await Harness.start();
    const { quiet } = h.channels;
    h.policy.speakers = ['anchor'];
    await h.say(quiet, 'Hello?');
    expect(h.personaPosts(quiet)).toHaveLength(0);
    expect((await slash({ verb: 'channel on', channel: quiet })).data.content).toMatch(/now take part/);
    await h.say(quiet, 'Hello again?');
    expect(h.personaPosts(quiet)).toHaveLength(1);
    await slash({ verb: 'pause', channel: quiet });
    await h.say(quiet, 'Still there?');
    expect(h.personaPosts(quiet)).toHaveLength(1);
    await slash({ verb: 'resume', channel: quiet });
    await h.say(quiet, 'Now?');
    expect(h.personaPosts(quiet)).toHaveLength(2);
    expect((await slash({ verb: 'channel pack', args: { pack: 'meeting' }, channel: quiet })).data.content).toMatch(/not available here\. Accepted: support/);
  });

  it('opt-out stops logging that person while the bots still answer; forget me deletes what was stored', async () => {
    h = await Harness.start();
    const { enabled } = h.channels;
    h.policy.speakers = ['anchor'];
    const stored = (userId: string) => h!.runtime.db.prepare('SELECT COUNT(*) FROM messages WHERE author_id = ?').pluck().get(userId);
    await h.say(enabled, 'First message, logged.');
    expect(stored(h.people.human.id)).toBe(1);

    const out = await slash({ command: 'mascot-me', verb: 'optout', user: h.people.human, permissions: 0n });
    expect(out.data).toMatchObject({ flags: 64, content: expect.stringMatching(/not stored/) });
    expect(out.data.content).toContain('until you use `/mascot-me forgetme`; `/mascot-me optin` undoes this');
    await h.say(enabled, 'Something private.');
    expect(h.personaPosts(enabled)).toHaveLength(2);
    expect(stored(h.people.human.id)).toBe(1);
    expect(h.runtime.db.prepare("SELECT COUNT(*) FROM messages WHERE text = 'Something private.'").pluck().get()).toBe(0);

    const forget = await slash({ command: 'mascot-me', verb: 'forgetme', user: h.people.human, permissions: 0n });
    expect(forget.data.content).toMatch(/Deleted 1 stored message/);
    expect(stored(h.people.human.id)).toBe(0);
  });
});
