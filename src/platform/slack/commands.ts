// `/mascot` in Slack: the typed text goes to the platform-neutral verb core (src/moderation);
// `recap` is Slack's own. Moderator verbs need a workspace admin or owner (users.info) or a user
// id on SLACK_MODERATOR_IDS; the core checks. Every answer is ephemeral, through response_url.
import type { MascotContext, MascotResult } from '../../moderation/mascot.ts';
import { runMascotText } from '../../moderation/mascot.ts';
import type { Runtime } from '../../runtime.ts';
import { channelKeyOf } from '../../session/engine.ts';
import type { SlackDirectory } from './directory.ts';
import type { SlackIdentities } from './identities.ts';
import { threadConversationId } from './inbound.ts';
import { postRecap, RecapProblem, recapBrief, type RecapDeps } from './recap.ts';

/** The fields of a slash command payload we read. */
export interface SlashCommand {
  text: string;
  user_id: string;
  user_name?: string;
  channel_id: string;
  team_id?: string;
}

export interface CommandDeps {
  runtime: Runtime;
  identities: SlackIdentities;
  directory: SlackDirectory;
  moderatorIds: readonly string[];
  recap: RecapDeps;
  /** Threads whose recap is being written now: a double click does not post two. */
  recapsRunning: Set<string>;
}

export const RECAP_USAGE = '`recap [thread link]`: post the recap of a meeting thread (summary, decisions, action items) in that thread';

/** The newest thread conversation in a channel that the companions took part in (or saw), if any. */
export function latestThread(runtime: Runtime, channel: string): string | undefined {
  const prefix = channelKeyOf('slack', threadConversationId(channel, ''));
  const key = runtime.store.safely('latest thread', () =>
    runtime.db
      .prepare("SELECT channel_key FROM messages WHERE channel_key LIKE ? ESCAPE '\\' ORDER BY at DESC, id DESC LIMIT 1")
      .pluck()
      .get(`${prefix.replace(/[\\%_]/g, '\\$&')}%`),
  ) as string | undefined;
  return key?.slice(prefix.length);
}

/**
 * What the verb core needs to know about the person and the place. Slack runs slash commands only
 * in channels, not threads, so "this conversation" (the last round to rate, the round to stop) is
 * the channel's newest thread, while settings are the channel's.
 */
export async function mascotContext(deps: CommandDeps, cmd: Pick<SlashCommand, 'user_id' | 'user_name' | 'channel_id' | 'team_id'>): Promise<MascotContext> {
  const person = await deps.directory.person(cmd.user_id);
  const direct = cmd.channel_id.startsWith('D');
  const thread = direct ? undefined : latestThread(deps.runtime, cmd.channel_id);
  return {
    engine: deps.runtime.engine,
    platform: 'slack',
    ...(thread ? { channelId: threadConversationId(cmd.channel_id, thread), parentChannelId: cmd.channel_id } : { channelId: cmd.channel_id }),
    ...(cmd.team_id && !direct ? { spaceId: cmd.team_id } : {}),
    user: { id: cmd.user_id, name: person.known ? person.name : (cmd.user_name ?? cmd.user_id), isModerator: person.isAdmin },
    moderators: { userIds: deps.moderatorIds, roleIds: [] },
    moderatorsAre: 'workspace admins and owners, and people the operator listed',
    identityOf: (persona) => deps.identities.describe(persona),
  };
}

/**
 * Which thread `/mascot recap` means. Slack does not run slash commands inside threads, so the
 * thread is given by its link (or ts), or is the newest conversation in this channel we took part in.
 */
export function recapTarget(deps: CommandDeps, channel: string, arg: string): { threadTs: string } | { problem: string } {
  const word = arg.trim().replace(/^<|>$/g, '').split('|')[0]!.trim();
  if (word) {
    const link = /\/archives\/([A-Z0-9]+)\/p(\d{10})(\d{6})(?:\?(.*))?$/.exec(word);
    if (link) {
      if (link[1] !== channel) return { problem: 'That link is to a message in another channel: use `/mascot recap` in that channel.' };
      const threadTs = new URLSearchParams(link[4] ?? '').get('thread_ts');
      return { threadTs: threadTs && /^\d+\.\d+$/.test(threadTs) ? threadTs : `${link[2]}.${link[3]}` };
    }
    if (/^\d{10}\.\d{6}$/.test(word)) return { threadTs: word };
    return { problem: `"${word}" is not a thread link. Accepted: the link of the thread's first message (More actions > Copy link), or nothing for the latest thread here.` };
  }
  const latest = latestThread(deps.runtime, channel);
  if (!latest) return { problem: 'No meeting thread with the companions here yet. Give the thread\'s link: `/mascot recap <link>` (More actions > Copy link on its first message).' };
  return { threadTs: latest };
}

/** Post a recap and say where, for the person who asked. */
export async function runRecap(deps: CommandDeps, channel: string, threadTs: string): Promise<MascotResult> {
  const key = `${channel}:${threadTs}`;
  if (deps.recapsRunning.has(key)) return { text: 'A recap of this thread is already being written.', ephemeral: true, status: 'invalid' };
  deps.recapsRunning.add(key);
  const pack = deps.runtime.engine.channelConfig(channelKeyOf('slack', channel)).pack;
  try {
    const posted = await postRecap(deps.recap, { channel, threadTs, channelPack: pack });
    return { text: `${posted.by} posted the recap in the thread: ${recapBrief(posted.recap)}.`, ephemeral: true, status: 'ok' };
  } catch (err) {
    if (err instanceof RecapProblem) return { text: err.message, ephemeral: true, status: 'invalid' };
    deps.recap.log.error({ channel, thread: threadTs, err: (err as Error).message }, 'recap failed');
    return { text: `The recap could not be posted (${(err as Error).message}). Nothing was posted; try again in a moment.`, ephemeral: true, status: 'error' };
  } finally {
    deps.recapsRunning.delete(key);
  }
}

/** One `/mascot ...` invocation, start to answer. Never throws. */
export async function handleSlashCommand(deps: CommandDeps, cmd: SlashCommand): Promise<MascotResult> {
  const text = cmd.text.trim();
  const recap = /^recap(?:\s+(.*))?$/is.exec(text);
  if (recap) {
    if (cmd.channel_id.startsWith('D')) return { text: 'Recaps are for meeting threads in channels: use `/mascot recap` in the meeting\'s channel.', ephemeral: true, status: 'invalid' };
    const target = recapTarget(deps, cmd.channel_id, recap[1] ?? '');
    if ('problem' in target) return { text: target.problem, ephemeral: true, status: 'invalid' };
    return runRecap(deps, cmd.channel_id, target.threadTs);
  }
  const ctx = await mascotContext(deps, cmd);
  const result = await runMascotText(ctx, text);
  // The core's help lists the shared verbs; recap is Slack's own.
  if (text === '' || /^help\b/i.test(text)) return { ...result, text: `${result.text}\n${RECAP_USAGE}` };
  return result;
}
