import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../src/core/types.ts';
import {
  completeMascotArg,
  mascotVerbs,
  parseCommandText,
  parseModerators,
  recordReaction,
  registerVerb,
  runMascotCommand,
  runMascotText,
  type MascotContext,
} from '../src/moderation/mascot.ts';
import { effectivePersonas, spaceScopeOf } from '../src/session/overrides.ts';
import type { Engine } from '../src/session/engine.ts';
import { humanEvent, makeEngine, RecordingOutlet, ScriptedGenerator, tempDir } from './support/core.ts';

const GUILD = 'g1';
const CHANNEL = 'c1';
const KEY = `discord:${CHANNEL}`;

function setup(dbFile?: string) {
  const gen = new ScriptedGenerator();
  const made = makeEngine(gen, {}, dbFile);
  return { gen, ...made };
}

function ctxFor(engine: Engine, user: Partial<MascotContext['user']> = {}, extra: Partial<MascotContext> = {}): MascotContext {
  return {
    engine,
    platform: 'discord',
    channelId: CHANNEL,
    spaceId: GUILD,
    user: { id: 'mod-1', name: 'Morgan', isModerator: true, ...user },
    ...extra,
  };
}

const member = { id: 'u-7', name: 'Riley', isModerator: false };

function discordEvent(text: string, overrides: Partial<ChatEvent> = {}): ChatEvent {
  return humanEvent(text, { platform: 'discord', channelId: CHANNEL, spaceId: GUILD, author: { id: 'u-7', name: 'Riley', isBot: false }, ...overrides });
}

function supportPack(engine: Engine) {
  return engine.packs.get('support')!;
}

describe('/mascot moderator rights', () => {
  it('refuses moderator verbs to members and accepts the platform check or the configured list', async () => {
    const { engine, store } = setup();
    const refused = await runMascotCommand(ctxFor(engine, member), 'persona set', { persona: 'anchor', field: 'talkativeness', value: '0.2' });
    expect(refused.status).toBe('refused');
    expect(refused.ephemeral).toBe(true);
    expect(refused.text).toMatch(/moderators/);
    expect(store.personaOverrides('support', 'anchor', KEY)).toEqual({});

    const moderators = parseModerators('role-mods, 999');
    const byRole = await runMascotCommand(ctxFor(engine, { ...member, roleIds: ['role-x', 'role-mods'] }, { moderators }), 'persona set', {
      persona: 'anchor',
      field: 'talkativeness',
      value: '0.2',
    });
    expect(byRole.status).toBe('ok');
    const byId = await runMascotCommand(ctxFor(engine, { ...member, id: '999' }, { moderators }), 'channel on');
    expect(byId.status).toBe('ok');
    const otherRole = await runMascotCommand(ctxFor(engine, { ...member, roleIds: ['role-x'] }, { moderators }), 'channel on');
    expect(otherRole.status).toBe('refused');
  });

  it('lets everyone use the member verbs, and lists only what a member may use', async () => {
    const { engine } = setup();
    const help = await runMascotCommand(ctxFor(engine, member), 'help');
    expect(help.status).toBe('ok');
    expect(help.text).toContain('optout');
    expect(help.text).not.toContain('persona set');
    const modHelp = await runMascotCommand(ctxFor(engine), 'help');
    expect(modHelp.text).toContain('persona set <persona> <field> <value> [scope]');
  });
});

describe('/mascot persona verbs', () => {
  it('sets talkativeness with an audit row and the engine uses it from the next turn', async () => {
    const { engine, store } = setup();
    const result = await runMascotCommand(ctxFor(engine), 'persona set', { persona: 'Anchor', field: 'talkativeness', value: '0.25' });
    expect(result).toMatchObject({ status: 'ok', ephemeral: true });
    expect(result.text).toMatch(/now 0\.25 .*was 0\.7/);

    const history = store.personaHistory('support', 'anchor', KEY);
    expect(history).toHaveLength(1);
    expect(history[0]).toMatchObject({ field: 'talkativeness', oldValue: undefined, newValue: 0.25, actor: 'Morgan (discord:mod-1)', action: 'set' });

    // The director sees the tuned persona on the next round, without a restart.
    await runMascotCommand(ctxFor(engine), 'channel on');
    const seen: number[] = [];
    engine.on('decision', (_key, _d, state) => seen.push(state.personas.find((p) => p.id === 'anchor')!.talkativeness));
    await engine.receive(discordEvent('I feel so alone since the move.'), new RecordingOutlet());
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((t) => t === 0.25)).toBe(true);
  });

  it('answers a wrong argument with what is accepted and changes nothing', async () => {
    const { engine, store } = setup();
    const cases: [Record<string, string>, RegExp][] = [
      [{ persona: 'anchor', field: 'talkativeness', value: '1.5' }, /talkativeness "1\.5" is not accepted: expected a number from 0 to 1/],
      [{ persona: 'anchor', field: 'temperature', value: 'hot' }, /expected a number from 0 to 2/],
      [{ persona: 'nobody', field: 'talkativeness', value: '0.3' }, /"nobody" is not a persona .*Accepted: anchor \(Anchor\), beacon/],
      [{ persona: 'anchor', field: 'volume', value: '3' }, /field "volume" is not accepted .*one of talkativeness, temperature, style, strategies, enabled/],
      [{ persona: 'anchor', field: 'strategies', value: 'reflection, suggestion' }, /one or more of Anchor's strategies.*reflection, restatement, reassurance/],
      [{ persona: 'anchor', field: 'enabled', value: 'maybe' }, /expected on or off/],
      [{ persona: 'anchor', field: 'talkativeness' }, /needs value/],
      [{ persona: 'anchor', field: 'style', value: 'x'.repeat(301) }, /at most 300 characters/],
      [{ persona: 'anchor', field: 'talkativeness', value: '0.3', scope: 'galaxy' }, /one of channel, server/],
    ];
    for (const [args, message] of cases) {
      const result = await runMascotCommand(ctxFor(engine), 'persona set', args);
      expect(result.status, JSON.stringify(args)).toBe('invalid');
      expect(result.text).toMatch(message);
    }
    expect(store.personaHistory('support', 'anchor', KEY)).toHaveLength(0);
    const unknownVerb = await runMascotCommand(ctxFor(engine), 'persona dance');
    expect(unknownVerb).toMatchObject({ status: 'invalid' });
    expect(unknownVerb.text).toMatch(/Accepted: personas, persona show/);
  });

  it('sets strategies, style and enabled; show and list report them with where they come from', async () => {
    const { engine, store } = setup();
    const ctx = ctxFor(engine);
    expect((await runMascotCommand(ctx, 'persona set', { persona: 'anchor', field: 'strategies', value: 'reassurance reflection' })).status).toBe('ok');
    expect((await runMascotCommand(ctx, 'persona set', { persona: 'anchor', field: 'style', value: 'Use shorter sentences.' })).status).toBe('ok');
    expect((await runMascotCommand(ctx, 'persona set', { persona: 'guide', field: 'enabled', value: 'off' })).status).toBe('ok');

    const personas = effectivePersonas(store, supportPack(engine), KEY, spaceScopeOf('discord', GUILD));
    expect(personas.map((p) => p.id)).toEqual(['anchor', 'beacon', 'catalyst']);
    const anchor = personas[0]!;
    expect(anchor.strategies).toEqual(['reflection', 'reassurance']);
    expect(anchor.voice.at(-1)).toBe('Use shorter sentences.');

    const show = await runMascotCommand({ ...ctx, identityOf: (p) => `connected as @${p.displayName}` }, 'persona show', { persona: 'anchor' });
    expect(show.text).toContain('Identity: connected as @Anchor');
    expect(show.text).toMatch(/strategies: reflection, reassurance \(set for this channel; file: reflection, restatement, reassurance\)/);
    expect(show.text).toMatch(/talkativeness: 0\.7 \(from the file\)/);

    const list = await runMascotCommand(ctx, 'personas');
    expect(list.text).toMatch(/\*\*Guide\*\* .*: off/);
    expect(list.text).toMatch(/\*\*Anchor\*\* .*2\/3 strategies .*tuned: style, strategies/);
  });

  it('keeps a history, rolls back to a version, and resets to the file values', async () => {
    const { engine, store } = setup();
    const ctx = ctxFor(engine);
    await runMascotCommand(ctx, 'persona set', { persona: 'catalyst', field: 'talkativeness', value: '0.9' });
    await runMascotCommand({ ...ctx, user: { id: 'mod-2', name: 'Jo', isModerator: true } }, 'persona set', { persona: 'catalyst', field: 'talkativeness', value: '0.1' });
    await runMascotCommand(ctx, 'persona set', { persona: 'catalyst', field: 'temperature', value: '1.1' });

    const history = await runMascotCommand(ctx, 'persona history', { persona: 'catalyst' });
    expect(history.text).toMatch(/v1 · .* Morgan \(discord:mod-1\): talkativeness the file value → 0\.9/);
    expect(history.text).toMatch(/v2 · .* Jo \(discord:mod-2\): talkativeness 0\.9 → 0\.1/);
    expect(history.text).toMatch(/v3 · .*temperature the file value → 1\.1/);

    const back = await runMascotCommand(ctx, 'persona rollback', { persona: 'catalyst', version: 1 });
    expect(back.status).toBe('ok');
    expect(store.personaOverrides('support', 'catalyst', KEY)).toEqual({ talkativeness: 0.9 });
    // The rollback is itself in the history, so it can be undone too.
    expect(store.personaHistory('support', 'catalyst', KEY).at(-1)).toMatchObject({ action: 'rollback' });

    const tooFar = await runMascotCommand(ctx, 'persona rollback', { persona: 'catalyst', version: 42 });
    expect(tooFar.status).toBe('invalid');
    expect(tooFar.text).toMatch(/versions 0 to 5/);

    await runMascotCommand(ctx, 'persona set', { persona: 'catalyst', field: 'temperature', value: '0.3' });
    expect((await runMascotCommand(ctx, 'persona reset', { persona: 'catalyst', field: 'temperature' })).status).toBe('ok');
    expect(store.personaOverrides('support', 'catalyst', KEY)).toEqual({ talkativeness: 0.9 });
    expect((await runMascotCommand(ctx, 'persona reset', { persona: 'catalyst' })).text).toMatch(/back to the file's values/);
    expect(store.personaOverrides('support', 'catalyst', KEY)).toEqual({});
    expect((await runMascotCommand(ctx, 'persona reset', { persona: 'catalyst' })).text).toMatch(/nothing to reset/);

    // A long history shows its newest changes, still numbered by their versions.
    for (let i = 0; i < 12; i++) await runMascotCommand(ctx, 'persona set', { persona: 'catalyst', field: 'talkativeness', value: String(i / 20) });
    const total = store.personaHistory('support', 'catalyst', KEY).length;
    const long = (await runMascotCommand(ctx, 'persona history', { persona: 'catalyst' })).text;
    expect(long).toContain(`(${total - 15} older changes not shown)`);
    expect(long).toMatch(new RegExp(`v${total} · .*talkativeness 0\\.5 → 0\\.55`));
    expect(long).not.toMatch(new RegExp(`v${total - 15} ·`));
  });

  it('server scope applies to every channel of that server only; a thread follows its channel', async () => {
    const { engine, store } = setup();
    await runMascotCommand(ctxFor(engine), 'persona set', { persona: 'beacon', field: 'talkativeness', value: '0.05', scope: 'server' });
    const pack = supportPack(engine);
    const talk = (channelKey: string, space?: string) =>
      effectivePersonas(store, pack, channelKey, space ? spaceScopeOf('discord', space) : undefined).find((p) => p.id === 'beacon')!.talkativeness;
    expect(talk('discord:other-channel', GUILD)).toBe(0.05);
    expect(talk('discord:elsewhere', 'another-guild')).toBe(0.5);

    // A channel override wins over the server's; set from inside a thread, it lands on the channel.
    await runMascotCommand(ctxFor(engine, {}, { channelId: 'thread-9', parentChannelId: CHANNEL }), 'persona set', { persona: 'beacon', field: 'talkativeness', value: '0.4' });
    expect(talk(KEY, GUILD)).toBe(0.4);
    expect(store.personaOverrides('support', 'beacon', 'discord:thread-9')).toEqual({});

    const dm = await runMascotCommand(ctxFor(engine, {}, { spaceId: undefined, channelId: 'dm-1' }), 'persona set', { persona: 'beacon', field: 'talkativeness', value: '0.3' });
    expect(dm.status).toBe('invalid');
    expect(dm.text).toMatch(/server channel/);
  });

  it('changes survive a restart', async () => {
    const file = path.join(tempDir(), 'mascot.db');
    const first = setup(file);
    await runMascotCommand(ctxFor(first.engine), 'persona set', { persona: 'guide', field: 'temperature', value: '0.2' });
    await runMascotCommand(ctxFor(first.engine), 'channel turns', { count: 1 });
    first.db.close();
    const second = setup(file);
    expect(second.store.personaOverrides('support', 'guide', KEY)).toEqual({ temperature: 0.2 });
    expect(second.engine.channelConfig(KEY).maxBotTurns).toBe(1);
    expect((await runMascotCommand(ctxFor(second.engine), 'persona history', { persona: 'guide' })).text).toMatch(/v1 .*temperature/);
  });
});

describe('/mascot channel verbs', () => {
  it('turns the channel on and off, chooses pack, policy and turns, with clear errors', async () => {
    const { engine } = setup();
    const ctx = ctxFor(engine);
    expect(engine.channelConfig(KEY).enabled).toBe(false);
    await runMascotCommand(ctx, 'channel on');
    expect(engine.channelConfig(KEY).enabled).toBe(true);

    expect((await runMascotCommand(ctx, 'channel pack', { pack: 'meeting' })).status).toBe('ok');
    expect(engine.channelConfig(KEY).pack).toBe('meeting');
    const badPack = await runMascotCommand(ctx, 'channel pack', { pack: 'karaoke' });
    expect(badPack).toMatchObject({ status: 'invalid' });
    expect(badPack.text).toMatch(/Accepted: .*meeting.*support|Accepted: .*support.*meeting/);

    expect((await runMascotCommand(ctx, 'channel policy', { policy: 'round-robin' })).status).toBe('ok');
    expect(engine.channelConfig(KEY).policy).toBe('round-robin');
    expect((await runMascotCommand(ctx, 'channel policy', { policy: 'oracle' })).text).toMatch(/Accepted: heuristic/);

    expect((await runMascotCommand(ctx, 'channel turns', { count: '3' })).status).toBe('ok');
    expect(engine.channelConfig(KEY).maxBotTurns).toBe(3);
    const nine = await runMascotCommand(ctx, 'channel turns', { count: 9 });
    expect(nine.text).toMatch(/expected a whole number from 0 to 8/);
    expect((await runMascotCommand(ctx, 'channel turns', { count: 1.5 })).status).toBe('invalid');

    const show = await runMascotCommand(ctx, 'channel show');
    expect(show.text).toMatch(/Pack: meeting · director policy: round-robin · bot turns per human message: 3/);
    expect(show.text).toMatch(/Morgan \(discord:mod-1\): maxBotTurns default → 3/);

    await runMascotCommand(ctx, 'channel reset', { setting: 'pack' });
    expect(engine.channelConfig(KEY).pack).toBe('support');
    await runMascotCommand(ctx, 'channel off');
    expect(engine.channelConfig(KEY).enabled).toBe(false);
  });

  it('pause stops a running round at once and keeps the channel quiet until resume', async () => {
    const { engine, gen } = setup();
    const ctx = ctxFor(engine);
    await runMascotCommand(ctx, 'channel on');
    gen.hold = () => true;
    const outlet = new RecordingOutlet();
    const round = engine.receive(discordEvent('I feel stuck and tired.'), outlet);
    while (gen.requests.length === 0) await new Promise((r) => setTimeout(r, 2));
    expect((await runMascotCommand(ctx, 'pause')).text).toMatch(/Paused/);
    await round;
    expect(gen.aborted).toHaveLength(1);
    expect(outlet.posts).toHaveLength(0);

    gen.hold = () => false;
    await engine.receive(discordEvent('Hello? Anyone?'), outlet);
    expect(outlet.posts).toHaveLength(0);
    await runMascotCommand(ctx, 'resume');
    await engine.receive(discordEvent('Okay, I am back.'), outlet);
    expect(outlet.posts.length).toBeGreaterThan(0);
  });
});

describe('/mascot member verbs', () => {
  const countMessages = (engine: Engine, author: string) =>
    engine.store.db.prepare('SELECT COUNT(*) FROM messages WHERE author_id = ?').pluck().get(author) as number;

  it('opt-out stops logging that person; opt-in starts it again', async () => {
    const { engine } = setup();
    await runMascotCommand(ctxFor(engine), 'channel on');
    const outlet = new RecordingOutlet();
    expect((await runMascotCommand(ctxFor(engine, member), 'optout')).text).toMatch(/not stored/);
    await engine.receive(discordEvent('Something private about my family.'), outlet);
    expect(outlet.posts.length).toBeGreaterThan(0); // the bots still answer
    expect(countMessages(engine, 'u-7')).toBe(0);
    expect(engine.store.db.prepare('SELECT COUNT(*) FROM decisions').pluck().get()).toBe(0);

    await runMascotCommand(ctxFor(engine, member), 'optin');
    await engine.receive(discordEvent('Thanks, that helps.'), outlet);
    expect(countMessages(engine, 'u-7')).toBe(1);
  });

  it('feedback rates the last round; forget me deletes messages and feedback', async () => {
    const { engine } = setup();
    const me = ctxFor(engine, member);
    expect((await runMascotCommand(me, 'feedback', { rating: 4 })).text).toMatch(/no bot round/);
    await runMascotCommand(ctxFor(engine), 'channel on');
    await engine.receive(discordEvent('My exam went badly and I feel like a failure.'), new RecordingOutlet());
    const round = engine.store.lastRound(KEY)!;
    expect(round.messageIds.length).toBeGreaterThan(0);

    expect((await runMascotCommand(me, 'feedback', { rating: 6 })).text).toMatch(/from 1 to 5/);
    expect((await runMascotCommand(me, 'feedback', { rating: 4, note: 'kind and short' })).status).toBe('ok');
    const row = engine.store.db.prepare('SELECT round_id, kind, value, note FROM feedback').get();
    expect(row).toEqual({ round_id: round.roundId, kind: 'rating', value: 4, note: 'kind and short' });

    // A 👍 on a persona message is feedback; on a human message or with another emoji it is not.
    const botId = round.messageIds[0]!;
    const reaction = { platform: 'discord' as const, channelId: CHANNEL, userId: 'u-7', at: Date.now() };
    expect(recordReaction(engine.store, { ...reaction, messageId: botId, emoji: '👍' })).toBe(true);
    expect(recordReaction(engine.store, { ...reaction, messageId: botId, emoji: '🎉' })).toBe(false);
    const humanId = engine.store.db.prepare('SELECT platform_id FROM messages WHERE is_bot = 0').pluck().get() as string;
    expect(recordReaction(engine.store, { ...reaction, messageId: humanId, emoji: '👎' })).toBe(false);

    const quoting = () => engine.store.db.prepare("SELECT COUNT(*) FROM decisions WHERE state_json LIKE '%exam went badly%'").pluck().get();
    expect(quoting()).toBeGreaterThan(0);
    const forget = await runMascotCommand(me, 'forgetme');
    expect(forget.text).toMatch(/Deleted 1 stored message and 2 feedback entries/);
    expect(countMessages(engine, 'u-7')).toBe(0);
    // The logged decision states no longer quote the person either.
    expect(quoting()).toBe(0);
    const state = JSON.parse(engine.store.db.prepare('SELECT state_json FROM decisions LIMIT 1').pluck().get() as string) as { human: string; humanName: string };
    expect(state).toMatchObject({ human: '[forgotten]', humanName: '[forgotten]' });
    expect(engine.store.db.prepare('SELECT COUNT(*) FROM feedback').pluck().get()).toBe(0);

    await runMascotCommand(me, 'optout');
    expect((await runMascotCommand(me, 'feedback', { rating: 5 })).text).toMatch(/opted out/);
    expect(recordReaction(engine.store, { ...reaction, messageId: botId, emoji: '👍' })).toBe(false);
  });
});

describe('/mascot typed text and autocomplete', () => {
  it('reads typed commands with positional, quoted and name=value arguments', async () => {
    expect(parseCommandText('persona set anchor style Keep it to two sentences. scope=server', mascotVerbs)).toEqual({
      verb: 'persona set',
      args: { persona: 'anchor', field: 'style', value: 'Keep it to two sentences.', scope: 'server' },
    });
    expect(parseCommandText('feedback 5 "really kind"', mascotVerbs)).toEqual({ verb: 'feedback', args: { rating: '5', note: 'really kind' } });
    expect(() => parseCommandText('channel turns 2 3', mascotVerbs)).toThrow(/more words than it takes/);

    const { engine, store } = setup();
    const done = await runMascotText(ctxFor(engine), 'persona set anchor talkativeness 0.4');
    expect(done.status).toBe('ok');
    expect(store.personaOverrides('support', 'anchor', KEY)).toEqual({ talkativeness: 0.4 });
    expect((await runMascotText(ctxFor(engine), '')).text).toMatch(/^Commands:/);
    expect((await runMascotText(ctxFor(engine), 'channel turns 2 3')).status).toBe('invalid');
  });

  it('suggests persona names of the channel pack, packs, policies and field names', async () => {
    const { engine } = setup();
    const ctx = ctxFor(engine);
    expect(completeMascotArg(ctx, 'persona set', 'persona', 'an')[0]).toEqual({ name: 'Anchor (emotional validator)', value: 'anchor' });
    expect(completeMascotArg(ctx, 'persona show', 'persona', '').map((c) => c.value)).toEqual(['anchor', 'beacon', 'catalyst', 'guide']);
    expect(completeMascotArg(ctx, 'channel pack', 'pack', 'mee').map((c) => c.value)).toEqual(['meeting']);
    expect(completeMascotArg(ctx, 'channel policy', 'policy', 'round').map((c) => c.value)).toEqual(['round-robin']);
    expect(completeMascotArg(ctx, 'persona set', 'field', 'te').map((c) => c.value)).toEqual(['temperature']);
    await runMascotCommand(ctx, 'channel pack', { pack: 'meeting' });
    expect(completeMascotArg(ctx, 'persona set', 'persona', '').map((c) => c.value)).toContain('skeptic');
  });

  it('takes verbs added by other modules', async () => {
    const { engine } = setup();
    registerVerb({ name: 'ping', summary: 'answers pong', audience: 'everyone', args: [{ name: 'times', description: 'how often', type: 'integer', required: false, min: 1, max: 3 }], run: (_c, a) => ({ text: 'pong'.repeat(Number(a.times ?? 1)), ephemeral: true, status: 'ok' }) });
    try {
      expect((await runMascotCommand(ctxFor(engine, member), 'ping', { times: 2 })).text).toBe('pongpong');
      expect((await runMascotCommand(ctxFor(engine, member), 'ping', { times: 4 })).status).toBe('invalid');
    } finally {
      mascotVerbs.delete('ping');
    }
  });
});
