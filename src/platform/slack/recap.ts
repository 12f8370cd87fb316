// `/mascot recap` in Slack: read the meeting thread (conversations.replies), have the recap built
// (src/meeting), and post it in the thread as the scribe persona. People who opted out are left
// out of what the recap reads.
import type { Logger } from '../../log.ts';
import { actionItemLine, buildRecap, recapText, type Recap, type ThreadMessage } from '../../meeting/recap.ts';
import type { Pack, Persona } from '../../persona/schema.ts';
import type { Generator } from '../../speaker/generator.ts';
import type { Store } from '../../store/store.ts';
import type { SlackDirectory } from './directory.ts';
import type { SlackIdentities, WebClient } from './identities.ts';
import { readableText, type SlackMessageEvent } from './inbound.ts';
import { escapeText, labelOffline, splitText, type Block, type SlackMessage } from './message.ts';
import type { SlackPoster } from './poster.ts';

/** Replies read at most (five pages); a longer thread is recapped from its first 1000 messages. */
const MAX_MESSAGES = 1000;
const PAGE = 200;

/** Something the person asking should hear (not a fault of ours). */
export class RecapProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecapProblem';
  }
}

export interface RecapDeps {
  reader: WebClient;
  identities: SlackIdentities;
  directory: SlackDirectory;
  poster: SlackPoster;
  store: Store;
  packs: ReadonlyMap<string, Pack>;
  /** Present when a model is configured; otherwise the recap is extractive. */
  generator?: Generator;
  log: Logger;
}

/** The persona who keeps the record: the scribe of this channel's pack, else of any pack. */
export function findScribe(packs: ReadonlyMap<string, Pack>, channelPack: string): Persona | undefined {
  const ordered = [packs.get(channelPack), ...packs.values()].filter((p): p is Pack => p !== undefined);
  for (const pack of ordered) {
    const scribe = pack.personas.find((p) => p.id === 'scribe');
    if (scribe) return scribe;
  }
  for (const pack of ordered) {
    const keeper = pack.personas.find((p) => p.strategies.includes('record-decision'));
    if (keeper) return keeper;
  }
  return undefined;
}

interface ReadThread {
  messages: ThreadMessage[];
  /** Names of people mentioned in the thread (owners are often mentioned, not writers). */
  mentioned: string[];
  leftOut: number;
}

function slackError(err: unknown): string {
  return (err as { data?: { error?: string } }).data?.error ?? (err as Error).message;
}

async function readThread(deps: RecapDeps, channel: string, threadTs: string, personas: readonly Persona[]): Promise<ReadThread> {
  const messages: ThreadMessage[] = [];
  const mentioned = new Set<string>();
  let leftOut = 0;
  let cursor: string | undefined;
  do {
    let page;
    try {
      page = await deps.reader.conversations.replies({ channel, ts: threadTs, limit: PAGE, ...(cursor ? { cursor } : {}) });
    } catch (err) {
      const code = slackError(err);
      if (code === 'thread_not_found' || code === 'message_not_found') throw new RecapProblem('That thread could not be found: check the link, or use the command in the thread\'s channel.');
      if (code === 'not_in_channel' || code === 'channel_not_found')
        throw new RecapProblem(`I cannot read that channel: invite <@${deps.identities.director.userId}> to it first.`);
      throw err;
    }
    for (const m of (page.messages ?? []) as SlackMessageEvent[]) {
      if (!m.text?.trim() || (m.subtype && !['bot_message', 'thread_broadcast', 'file_share', 'me_message'].includes(m.subtype))) continue;
      const isBot = Boolean(m.bot_id) || m.subtype === 'bot_message';
      let authorName: string;
      if (isBot) {
        const personaId = deps.identities.personaOfBot(m.bot_id);
        authorName = personas.find((p) => p.id === personaId)?.displayName ?? m.username ?? m.bot_profile?.name ?? 'bot';
      } else {
        if (!m.user) continue;
        if (deps.store.isOptedOut('slack', m.user)) {
          leftOut++;
          continue;
        }
        authorName = (await deps.directory.person(m.user)).name;
      }
      const text = await readableText(m.text, async (id) => {
        const name = (await deps.directory.person(id)).name;
        mentioned.add(name);
        return name;
      });
      messages.push({ authorId: m.user ?? m.bot_id ?? 'bot', authorName, isBot, text, at: Math.round(Number(m.ts) * 1000) });
    }
    cursor = page.response_metadata?.next_cursor || undefined;
  } while (cursor && messages.length < MAX_MESSAGES);
  return { messages: messages.slice(0, MAX_MESSAGES), mentioned: [...mentioned], leftOut };
}

/** The recap as a Slack message: header, summary, decisions, action items, and where it came from. */
export function recapMessage(recap: Recap, leftOut = 0): SlackMessage {
  const sections = (title: string, body: string): Block[] =>
    splitText(`*${title}*\n${body}`).map((piece) => ({ type: 'section', text: { type: 'mrkdwn', text: piece } }));
  const bullets = (lines: string[]) => lines.map((l) => `• ${l}`).join('\n');
  const none = '_None recorded in this thread._';
  const decisions = recap.decisions.map((d) => escapeText(d.text + (d.by ? ` (${d.by})` : '')));
  const items = recap.actionItems.map((a) => {
    const due = a.due ? ` _(due ${escapeText(a.due)})_` : '';
    return a.owner ? `*${escapeText(a.owner)}*: ${escapeText(a.task)}${due}` : `${escapeText(a.task)}${due} _(no owner named)_`;
  });
  const about = [`${recap.participants.length} ${recap.participants.length === 1 ? 'person' : 'people'}, ${recap.messageCount} messages`];
  if (recap.source === 'model' && recap.model) about.push(`written with ${escapeText(recap.model)}`);
  if (leftOut > 0) about.push(`${leftOut} message${leftOut === 1 ? '' : 's'} of people who opted out left out`);
  const blocks: Block[] = [
    { type: 'header', text: { type: 'plain_text', text: 'Meeting recap' } },
    ...sections('Summary', escapeText(recap.summary)),
    ...sections('Decisions', decisions.length ? bullets(decisions) : none),
    ...sections('Action items', items.length ? bullets(items) : none),
    { type: 'context', elements: [{ type: 'mrkdwn', text: about.join(' · ') }] },
  ];
  const message = { text: escapeText(`Meeting recap\n${recapText(recap)}`), blocks };
  if (recap.source === 'model') return message;
  const why = recap.fallbackReason ? ` (the model could not be used: ${escapeText(recap.fallbackReason)})` : '';
  return labelOffline(message, `offline voice: an extractive recap built from the thread's own sentences, not by a language model${why}`);
}

export interface PostedRecap {
  ts: string;
  recap: Recap;
  by: string;
}

/** Read the thread, build the recap and post it in the thread as the scribe. */
export async function postRecap(deps: RecapDeps, req: { channel: string; threadTs: string; channelPack: string; signal?: AbortSignal }): Promise<PostedRecap> {
  const personas = [...deps.packs.values()].flatMap((p) => p.personas);
  const thread = await readThread(deps, req.channel, req.threadTs, personas);
  if (!thread.messages.some((m) => !m.isBot)) throw new RecapProblem('There is nothing to recap in that thread yet.');
  const scribe = findScribe(deps.packs, req.channelPack);
  const recap = await buildRecap(thread.messages, {
    scribe,
    generator: deps.generator,
    log: deps.log,
    signal: req.signal,
    sessionKey: `slack:${req.channel}:${req.threadTs}`,
    knownNames: thread.mentioned,
  });
  const identity = scribe ? deps.identities.of(scribe) : deps.identities.app;
  const ts = await deps.poster.post({ channel: req.channel, threadTs: req.threadTs, message: recapMessage(recap, thread.leftOut), identity, signal: req.signal });
  deps.log.info({ channel: req.channel, thread: req.threadTs, source: recap.source, decisions: recap.decisions.length, actionItems: recap.actionItems.length }, 'recap posted');
  return { ts, recap, by: scribe?.displayName ?? deps.identities.director.name };
}

/** One line per action item, for the answer to the person who asked. */
export const recapBrief = (recap: Recap) =>
  `${recap.decisions.length} decision${recap.decisions.length === 1 ? '' : 's'}, ${recap.actionItems.length} action item${recap.actionItems.length === 1 ? '' : 's'}` +
  (recap.actionItems.length ? `: ${recap.actionItems.map(actionItemLine).join('; ')}` : '');
