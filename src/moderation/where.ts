// Where a command applies: the conversation's key, its settings' key, its pack, its persona override scopes, and
// who is acting, as the audit trail records it.
import type { Pack, Persona } from '../persona/schema.ts';
import { channelKeyOf } from '../session/engine.ts';
import { spaceScopeOf } from '../session/overrides.ts';
import type { Choice, MascotContext } from './verb.ts';
import { ArgumentProblem } from './verb.ts';

/** The conversation itself (a thread is its own conversation): rounds, feedback. */
export const conversationKey = (ctx: MascotContext): string => channelKeyOf(ctx.platform, ctx.channelId);

/** Where settings and persona overrides live: a thread follows its channel. */
export const settingsKey = (ctx: MascotContext): string => channelKeyOf(ctx.platform, ctx.parentChannelId ?? ctx.channelId);

/** The pack this conversation uses now (its setting, or the default). */
export function channelPack(ctx: MascotContext): Pack {
  return ctx.engine.packs.get(ctx.engine.channelConfig(settingsKey(ctx)).pack)!;
}

/** "alice (discord:1234)": the name as it was then, and the id that stays. */
export const actorOf = (ctx: MascotContext): string => `${ctx.user.name} (${ctx.platform}:${ctx.user.id})`;

export const SCOPES = ['channel', 'server'] as const;
export type ScopeName = (typeof SCOPES)[number];

/** The store scope of a scope name here; 'server' needs a server. */
export function storeScope(ctx: MascotContext, scope: ScopeName): string {
  if (scope === 'channel') return settingsKey(ctx);
  if (!ctx.spaceId) throw new ArgumentProblem('scope "server" works only inside a server; use scope "channel" here.');
  return spaceScopeOf(ctx.platform, ctx.spaceId);
}

/** Store scopes that shape a persona here, widest first. */
export function scopesHere(ctx: MascotContext): string[] {
  return ctx.spaceId ? ['*', spaceScopeOf(ctx.platform, ctx.spaceId), settingsKey(ctx)] : ['*', settingsKey(ctx)];
}

/** A persona of the pack by id or display name (any case); the error lists the accepted ones. */
export function findPersona(pack: Pack, text: string): Persona {
  const wanted = text.trim().replace(/^@/, '').toLowerCase();
  const persona = pack.personas.find((p) => p.id === wanted || p.displayName.toLowerCase() === wanted);
  if (!persona)
    throw new ArgumentProblem(`"${text}" is not a persona of the ${pack.name} pack used here. Accepted: ${pack.personas.map((p) => `${p.id} (${p.displayName})`).join(', ')}.`);
  return persona;
}

/** Persona suggestions for autocomplete: id or display name starting with (then containing) what was typed. */
export function personaChoices(ctx: MascotContext, partial: string): Choice[] {
  const q = partial.trim().toLowerCase();
  const pack = channelPack(ctx);
  const score = (p: Persona) => {
    const hay = [p.id, p.displayName.toLowerCase()];
    if (!q || hay.some((h) => h.startsWith(q))) return 0;
    return hay.some((h) => h.includes(q)) || p.role.toLowerCase().includes(q) ? 1 : 2;
  };
  return pack.personas
    .filter((p) => score(p) < 2)
    .sort((a, b) => score(a) - score(b))
    .map((p) => ({ name: `${p.displayName} (${p.role})`.slice(0, 100), value: p.id }));
}

/** Suggestions from a list of names. */
export function nameChoices(names: Iterable<string>, partial: string): Choice[] {
  const q = partial.trim().toLowerCase();
  return [...names].filter((n) => n.toLowerCase().includes(q)).map((n) => ({ name: n, value: n }));
}

/** A verb as a person types it here (see MascotContext.invocation). */
export function typed(ctx: MascotContext, verbName: string, args: Readonly<Record<string, string | number>> = {}): string {
  return ctx.invocation ? ctx.invocation(verbName, args) : [verbName, ...Object.values(args)].join(' ');
}

/** The same, in backticks, for hints in answers. */
export const cmd = (ctx: MascotContext, verbName: string, args: Readonly<Record<string, string | number>> = {}): string => `\`${typed(ctx, verbName, args)}\``;

export function formatWhen(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
