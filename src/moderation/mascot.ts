// `/mascot`, platform-neutral: the verb table, the moderator check, and one entry point that
// validates arguments and runs a verb. Discord and Slack adapters translate their interactions
// into `runMascotCommand(ctx, verb, args)` and show the answer to the person who asked.
// Other modules add verbs with `registerVerb` (e.g. `health`).
import { argsUsage, checkArgs, parseCommandText } from './args.ts';
import { channelVerbs } from './channel-verbs.ts';
import { memberVerbs } from './member-verbs.ts';
import { personaVerbs } from './persona-verbs.ts';
import type { Choice, MascotContext, MascotResult, MascotVerb, ModeratorList, RawArgs } from './verb.ts';
import { ArgumentProblem, failed, invalid, ok, refused } from './verb.ts';
import { cmd, typed } from './where.ts';

export type { ArgSpec, Audience, Choice, MascotContext, MascotResult, MascotStatus, MascotUser, MascotVerb, ModeratorList, RawArgs } from './verb.ts';
export { ArgumentProblem } from './verb.ts';
export { parseCommandText, usageOf } from './args.ts';
export { recordReaction, reactionValue, type Reaction } from './reactions.ts';

/** Every verb by name, in the order help lists them. */
export const mascotVerbs = new Map<string, MascotVerb>();

/** Add a verb (or replace one of the same name). */
export function registerVerb(verb: MascotVerb): void {
  if (!/^[a-z][a-z-]*( [a-z][a-z-]*)?$/.test(verb.name)) throw new Error(`verb name "${verb.name}" must be one or two lowercase words`);
  mascotVerbs.set(verb.name, verb);
}

const help: MascotVerb = {
  name: 'help',
  summary: 'what you can do here',
  audience: 'everyone',
  args: [],
  run(ctx) {
    const mod = isModerator(ctx);
    const lines = ['Commands:'];
    for (const v of mascotVerbs.values()) if (mod || v.audience === 'everyone') lines.push(`\`${typed(ctx, v.name)}${argsUsage(v)}\`: ${v.summary}`);
    if (!mod) lines.push(`Moderators (${moderatorsAre(ctx)}) can also tune personas and channels.`);
    return ok(lines.join('\n'));
  },
};

for (const verb of [...personaVerbs, ...channelVerbs, ...memberVerbs, help]) registerVerb(verb);

/** Parse an operator's moderator list: ids separated by commas or spaces, users and roles alike. */
export function parseModerators(text: string | undefined): ModeratorList {
  const ids = (text ?? '').split(/[\s,]+/).filter(Boolean);
  return { userIds: ids, roleIds: ids };
}

const moderatorsAre = (ctx: MascotContext) => ctx.moderatorsAre ?? 'people with Manage Server, or with a moderator role the operator configured';

/** The platform says so, or the person or one of their roles is on the configured list. */
export function isModerator(ctx: MascotContext): boolean {
  if (ctx.user.isModerator) return true;
  const list = ctx.moderators;
  if (!list) return false;
  return list.userIds.includes(ctx.user.id) || (ctx.user.roleIds ?? []).some((r) => list.roleIds.includes(r));
}

/** Run one verb for one person; never throws: every outcome is an answer for that person. */
export async function runMascotCommand(ctx: MascotContext, verbName: string, raw: RawArgs = {}): Promise<MascotResult> {
  const verb = mascotVerbs.get(verbName.trim().toLowerCase());
  if (!verb) {
    const names = [...mascotVerbs.values()].filter((v) => v.audience === 'everyone' || isModerator(ctx)).map((v) => v.name);
    return invalid(`"${verbName}" is not a command. Accepted: ${names.join(', ')}.`);
  }
  if (verb.audience === 'moderator' && !isModerator(ctx))
    return refused(`${cmd(ctx, verb.name)} is for moderators: ${moderatorsAre(ctx)}.`);
  if (verb.needsServer && !ctx.spaceId) return invalid(`${cmd(ctx, verb.name)} works in a server channel, not in a direct message.`);
  try {
    return await verb.run(ctx, checkArgs(verb, raw));
  } catch (err) {
    if (err instanceof ArgumentProblem || err instanceof RangeError) return invalid(err.message);
    return failed(`${cmd(ctx, verb.name)} could not be completed (${(err as Error).message}); nothing was changed.`);
  }
}

/** Run typed command text (Slack's `/mascot persona set anchor talkativeness 0.3`). */
export async function runMascotText(ctx: MascotContext, text: string): Promise<MascotResult> {
  if (text.trim() === '') return runMascotCommand(ctx, 'help');
  try {
    const parsed = parseCommandText(text, mascotVerbs);
    return await runMascotCommand(ctx, parsed.verb, parsed.args);
  } catch (err) {
    if (err instanceof ArgumentProblem) return invalid(err.message);
    throw err;
  }
}

/** Autocomplete suggestions for one argument of one verb, at most `limit` (Discord allows 25). */
export function completeMascotArg(ctx: MascotContext, verbName: string, argName: string, partial: string, limit = 25): Choice[] {
  const spec = mascotVerbs.get(verbName)?.args.find((a) => a.name === argName);
  if (!spec) return [];
  if (spec.complete) return spec.complete(ctx, partial).slice(0, limit);
  if (spec.choices) return spec.choices.filter((c) => c.startsWith(partial.toLowerCase())).slice(0, limit).map((c) => ({ name: c, value: c }));
  return [];
}
