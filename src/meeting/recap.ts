// A meeting recap: what a thread was about, the decisions taken and the action items with their
// owners. With a model configured the scribe persona writes it through the Generator; without one
// (or when the model fails) it is built from the thread's own sentences, and says so.
import type { Logger } from '../log.ts';
import type { Persona } from '../persona/schema.ts';
import type { Generator } from '../speaker/generator.ts';
import { extractiveRecap } from './extract.ts';
import { modelRecap } from './model-recap.ts';

/** One message of the thread, as the recap reads it. */
export interface ThreadMessage {
  authorId: string;
  authorName: string;
  isBot: boolean;
  text: string;
  at: number;
}

export interface RecapDecision {
  text: string;
  /** Who stated it, when known. */
  by?: string;
}

export interface ActionItem {
  task: string;
  /** The person named as owner; absent when nobody was named. */
  owner?: string;
  /** The due date as written ("Friday", "end of week"). */
  due?: string;
}

export interface Recap {
  /** Two to four sentences (model), or the opening question and the points most of the thread returned to (extractive). */
  summary: string;
  decisions: RecapDecision[];
  actionItems: ActionItem[];
  /** People (not bots) who wrote in the thread, in order of first message. */
  participants: string[];
  /** Messages the recap was built from. */
  messageCount: number;
  source: 'model' | 'extractive';
  /** Model that wrote it (source 'model'). */
  model?: string;
  /** Why an extractive recap stands in for a model's (the model failed or answered unreadably). */
  fallbackReason?: string;
}

export interface RecapOptions {
  /** The scribe persona who writes the recap. */
  scribe?: Persona;
  /** A model-backed generator; absent means the offline, extractive recap. */
  generator?: Generator;
  log: Logger;
  signal?: AbortSignal;
  /** Key of the conversation, for the generator's bookkeeping. */
  sessionKey: string;
  /** Names of people mentioned in the thread: they can own action items without having written. */
  knownNames?: readonly string[];
}

/** People in order of their first message. */
export function participantsOf(messages: readonly ThreadMessage[]): string[] {
  return [...new Set(messages.filter((m) => !m.isBot).map((m) => m.authorName))];
}

export async function buildRecap(messages: readonly ThreadMessage[], options: RecapOptions): Promise<Recap> {
  const extractive = () => extractiveRecap(messages, { knownNames: options.knownNames });
  if (!options.generator) return extractive();
  try {
    return await modelRecap(messages, { generator: options.generator, scribe: options.scribe, signal: options.signal, sessionKey: options.sessionKey });
  } catch (err) {
    if (options.signal?.aborted) throw err;
    const reason = (err as Error).message;
    options.log.warn({ err: reason }, 'model recap failed; building the recap from the thread instead');
    return { ...extractive(), fallbackReason: reason };
  }
}

/** The recap as plain text with simple Markdown-style lists (consoles, logs, other platforms). */
export function recapText(recap: Recap): string {
  const lines = ['Summary:', recap.summary, '', 'Decisions:'];
  lines.push(...(recap.decisions.length ? recap.decisions.map((d) => `- ${d.text}${d.by ? ` (${d.by})` : ''}`) : ['- none recorded']));
  lines.push('', 'Action items:');
  lines.push(...(recap.actionItems.length ? recap.actionItems.map((a) => `- ${actionItemLine(a)}`) : ['- none recorded']));
  return lines.join('\n');
}

/** "Dana: send the deck to legal (due Friday)" or "send the deck to legal (no owner named)". */
export function actionItemLine(item: ActionItem): string {
  const due = item.due ? ` (due ${item.due})` : '';
  return item.owner ? `${item.owner}: ${item.task}${due}` : `${item.task}${due} (no owner named)`;
}
