// Moderator verbs on a channel: show its settings, turn the bots on or off, choose the pack, the
// director policy and the bot turns per human message, pause and resume. Settings are stored
// with an audit row and read by the engine on every message, so they apply without restart.
import type { ChannelConfig } from '../session/engine.ts';
import type { MascotContext, MascotVerb } from './verb.ts';
import { invalid, ok } from './verb.ts';
import { actorOf, cmd, conversationKey, formatWhen, nameChoices, settingsKey } from './where.ts';
import { formatValue } from './persona-verbs.ts';

const MAX_BOT_TURNS = 8;
const CHANGES_SHOWN = 5;
const SETTINGS = ['enabled', 'paused', 'pack', 'policy', 'maxBotTurns'] as const satisfies readonly (keyof ChannelConfig)[];

/** Store one channel setting (undefined: back to the default); says whether anything changed. */
function setSetting(ctx: MascotContext, field: (typeof SETTINGS)[number], value: unknown): boolean {
  const key = settingsKey(ctx);
  const old = ctx.engine.store.channelSettings(key)[field];
  if (JSON.stringify(old) === JSON.stringify(value)) return false;
  ctx.engine.store.setChannelSetting(key, field, value, actorOf(ctx));
  return true;
}

/** Stop a round that is running now (the bots go quiet at once, not after their next turn). */
function stopRound(ctx: MascotContext, reason: string): void {
  ctx.engine.session(conversationKey(ctx)).cancel(reason);
}

const showChannel: MascotVerb = {
  name: 'channel show',
  summary: "this channel's settings and recent changes",
  audience: 'moderator',
  args: [],
  run(ctx) {
    const key = settingsKey(ctx);
    const config = ctx.engine.channelConfig(key);
    const stored = ctx.engine.store.channelSettings(key);
    const src = (f: string) => (f in stored ? '' : ' (default)');
    const lines = [
      `Bots in this channel: ${config.enabled ? 'on' : 'off (they answer only when a persona is mentioned)'}${src('enabled')}${config.paused ? ' · **paused**' : ''}`,
      `Pack: ${config.pack}${src('pack')} · director policy: ${config.policy}${src('policy')} · bot turns per human message: ${config.maxBotTurns}${src('maxBotTurns')}`,
    ];
    const history = ctx.engine.store.history(`channel:${key}`, CHANGES_SHOWN);
    if (history.length > 0) {
      lines.push('Recent changes:');
      for (const e of history) lines.push(`${formatWhen(e.at)} · ${e.actor}: ${e.field} ${formatValue(e.oldValue).replace('the file value', 'default')} → ${formatValue(e.newValue).replace('the file value', 'default')}`);
    }
    return ok(lines.join('\n'));
  },
};

const channelOn: MascotVerb = {
  name: 'channel on',
  summary: 'the bots take part in this channel',
  audience: 'moderator',
  args: [],
  run(ctx) {
    const changed = setSetting(ctx, 'enabled', true);
    const paused = ctx.engine.channelConfig(settingsKey(ctx)).paused;
    return ok(`${changed ? 'The bots now take part in this channel' : 'The bots already take part in this channel'}${paused ? ` (it is paused: use ${cmd(ctx, 'resume')})` : ''}.`);
  },
};

const channelOff: MascotVerb = {
  name: 'channel off',
  summary: 'the bots answer here only when a persona is mentioned',
  audience: 'moderator',
  args: [],
  run(ctx) {
    const changed = setSetting(ctx, 'enabled', false);
    stopRound(ctx, 'channel turned off');
    return ok(changed ? 'The bots no longer take part in this channel; they answer only when a persona is mentioned.' : 'The bots were already off in this channel.');
  },
};

/** Packs a channel here may use: those the platform offers, among those loaded. */
const offeredPacks = (ctx: MascotContext): string[] => [...ctx.engine.packs.keys()].filter((id) => !ctx.packs || ctx.packs.includes(id));

const channelPack: MascotVerb = {
  name: 'channel pack',
  summary: 'choose the persona pack of this channel',
  audience: 'moderator',
  args: [{ name: 'pack', description: 'persona pack', type: 'string', required: true, complete: (ctx, partial) => nameChoices(offeredPacks(ctx), partial) }],
  run(ctx, args) {
    const id = String(args.pack).toLowerCase();
    const pack = offeredPacks(ctx).includes(id) ? ctx.engine.packs.get(id) : undefined;
    if (!pack) return invalid(`pack "${String(args.pack)}" is not available here. Accepted: ${offeredPacks(ctx).join(', ')}.`);
    const changed = setSetting(ctx, 'pack', id);
    if (changed) stopRound(ctx, 'pack changed');
    return ok(changed ? `This channel now uses the ${pack.name} pack (${pack.personas.map((p) => p.displayName).join(', ')}).` : `This channel already uses the ${pack.name} pack.`);
  },
};

const channelPolicy: MascotVerb = {
  name: 'channel policy',
  summary: 'choose the director policy of this channel',
  audience: 'moderator',
  args: [{ name: 'policy', description: 'director policy', type: 'string', required: true, complete: (ctx, partial) => nameChoices(ctx.engine.policies.keys(), partial) }],
  run(ctx, args) {
    const id = String(args.policy).toLowerCase();
    if (!ctx.engine.policies.has(id)) return invalid(`director policy "${String(args.policy)}" is not available. Accepted: ${[...ctx.engine.policies.keys()].join(', ')}.`);
    const changed = setSetting(ctx, 'policy', id);
    return ok(changed ? `The director here now uses the ${id} policy, from the next message.` : `The director here already uses the ${id} policy.`);
  },
};

const channelTurns: MascotVerb = {
  name: 'channel turns',
  summary: 'bot turns at most after each human message (0: the bots stay quiet)',
  audience: 'moderator',
  args: [{ name: 'count', description: 'bot turns per human message', type: 'integer', required: true, min: 0, max: MAX_BOT_TURNS }],
  run(ctx, args) {
    const n = Number(args.count);
    const changed = setSetting(ctx, 'maxBotTurns', n);
    return ok(changed ? `At most ${n} bot turn${n === 1 ? '' : 's'} now follow each human message here.` : `This channel already allows ${n} bot turn${n === 1 ? '' : 's'} per human message.`);
  },
};

const channelReset: MascotVerb = {
  name: 'channel reset',
  summary: "return this channel's settings (or one) to the defaults",
  audience: 'moderator',
  args: [{ name: 'setting', description: 'one setting, or all', type: 'string', required: false, choices: SETTINGS }],
  run(ctx, args) {
    const stored = ctx.engine.store.channelSettings(settingsKey(ctx));
    const fields = SETTINGS.filter((f) => f in stored && (args.setting === undefined || args.setting === f));
    if (fields.length === 0) return ok('Nothing to reset: this channel uses the defaults for that.');
    ctx.engine.store.db.transaction(() => {
      for (const f of fields) setSetting(ctx, f, undefined);
    })();
    return ok(`Back to the default: ${fields.join(', ')}.`);
  },
};

const pause: MascotVerb = {
  name: 'pause',
  summary: 'the bots stop now and stay quiet in this channel until resumed',
  audience: 'moderator',
  args: [],
  run(ctx) {
    const changed = setSetting(ctx, 'paused', true);
    stopRound(ctx, 'paused by a moderator');
    return ok(changed ? `Paused: the bots are quiet in this channel until ${cmd(ctx, 'resume')}.` : 'The bots were already paused here.');
  },
};

const resume: MascotVerb = {
  name: 'resume',
  summary: 'the bots take part again after a pause',
  audience: 'moderator',
  args: [],
  run(ctx) {
    // Removing the setting (rather than storing false) keeps the channel on its defaults.
    const changed = setSetting(ctx, 'paused', undefined);
    return ok(changed ? 'Resumed: the bots take part again from the next message.' : 'The bots were not paused here.');
  },
};

export const channelVerbs: MascotVerb[] = [showChannel, channelOn, channelOff, channelPack, channelPolicy, channelTurns, channelReset, pause, resume];
